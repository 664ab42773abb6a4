"""The events' verbs against real services and real initds: initd emit, initd hooks
list/check/trust, initd sessions, initd config; and a service killed mid-webhook."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hooks.support import ROOT_HOME, forget_session, git_repo
from tests.service.support import call, is_service, service_process, start
from tests.support.harness import wait_for

INITD = [sys.executable, "-m", "initd"]


def initd(*args: str, sock: str | None = None, stdin: str | None = None,
          cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, **env, **({"INITD_SOCKET": sock} if sock else {})}
    return subprocess.run([*INITD, *args], capture_output=True, text=True, timeout=60,
                          input=stdin, env=environ, cwd=cwd)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = git_repo(tmp_path / "ws")
    (path / ".nyzhi").mkdir()
    (path / ".nyzhi" / "config.toml").write_text("""
[[agent.hooks]]
event = "pre_tool"
tool_name = "git_commit"
command = "echo 'tests fail' >&2; exit 2"
block = true

[[agent.hooks]]
event = "after_turn"
command = "echo 'after turn' {file}"
""")
    (path / "pipeline.yaml").write_text("""
hooks:
  on_iteration_complete:
    - type: shell
      command: "exit 1"
      await: true
      on_failure: abort
""")
    return path


@pytest.fixture
def service(repo: Path, tmp_path: Path) -> Iterator[str]:
    sid = f"cli-{uuid.uuid4().hex[:8]}"
    sock = str(tmp_path / "initd.sock")
    proc = start(sock, str(repo), sid)
    yield sock
    proc.send_signal(signal.SIGTERM)
    proc.wait(10)
    forget_session(sid)


@pytest.mark.slow
def test_emit_exit_codes_and_output(service: str) -> None:
    blocked = initd("emit", "pre_tool", "--data", '{"tool_name": "git_commit"}', sock=service)
    assert blocked.returncode == 2 and "initd: blocked: tests fail" in blocked.stderr
    assert json.loads(blocked.stdout)["results"][0]["stderr"] == "tests fail\n"
    allowed = initd("emit", "PreToolUse", "--data", '{"tool_name": "bash"}', sock=service)
    assert allowed.returncode == 0 and json.loads(allowed.stdout)["blocked"] is False
    piped = initd("emit", "after_turn", "--data", "-", stdin='{"file": "a b.txt"}',
                  sock=service)
    assert json.loads(piped.stdout)["results"][0]["stdout"] == "after turn a b.txt\n"
    aborted = initd("emit", "on_iteration_complete", sock=service)
    assert aborted.returncode == 3 and json.loads(aborted.stdout)["aborted"] is True


@pytest.mark.parametrize(("args", "code", "message"), [
    (["emit", "pre_tol"], 1, "no event 'pre_tol'"),
    (["emit", "after_turn", "--data", "{nope"], 125, "--data: not valid JSON"),
    (["emit", "after_turn", "--data", "[1]"], 125, "--data: expected a JSON object"),
])
def test_emit_errors(service: str, args: list[str], code: int, message: str) -> None:
    out = initd(*args, sock=service)
    assert out.returncode == code and message in out.stderr, out.stderr


def test_events_over_the_api_as_any_format_names_them(service: str) -> None:
    code, outcome = call(service, "POST", "/v1/events/pre_tool_use", {"tool_name": "git_commit"})
    assert code == 200 and outcome["event"] == "pre_tool" and outcome["blocked"]
    code, body = call(service, "POST", "/v1/events/nope", {})
    assert code == 404 and "no event 'nope'" in body["error"]


@pytest.mark.slow
def test_hooks_list_and_check_across_dialects(repo: Path) -> None:
    listed = initd("hooks", "list", "--workspace", str(repo), "--hooks-dir", str(repo / "x"))
    assert listed.returncode == 0
    assert "pre_tool" in listed.stdout and "nyzhi" in listed.stdout
    assert "tool_name=git_commit" in listed.stdout
    assert f"{repo}/.nyzhi/config.toml: agent.hooks[0]" in listed.stdout
    assert f"{repo}/pipeline.yaml: hooks.on_iteration_complete[0]" in listed.stdout
    as_json = json.loads(initd("hooks", "list", "--json", "--workspace", str(repo),
                               "--hooks-dir", str(repo / "x")).stdout)
    assert [h["dialect"] for h in as_json["events"]] == ["nyzhi", "nyzhi", "pipelines"]
    assert initd("hooks", "check", "--workspace", str(repo), "--hooks-dir",
                 str(repo / "x")).returncode == 0
    (repo / ".iteratr.hooks.yml").write_text("hooks:\n  pre_iteraton: [{command: x}]\n")
    bad = initd("hooks", "check", "--workspace", str(repo), "--hooks-dir", str(repo / "x"))
    assert bad.returncode == 1
    assert f"{repo}/.iteratr.hooks.yml: hooks.pre_iteraton: unknown event" in bad.stdout


@pytest.mark.slow
def test_trust_gates_workspace_hooks_until_a_person_approves(repo: Path,
                                                             tmp_path: Path) -> None:
    """initd as PID 1 with --trust: an unapproved pre_tool hook never runs; approved, it
    does; changed, it stops again."""
    trust_file = str(tmp_path / "trust.json")
    (repo / ".nyzhi" / "config.toml").write_text(
        '[[agent.hooks]]\nevent = "pre_tool"\ncommand = "touch ran; exit 2"\n'
        'block = true\non_error = "deny"\n')
    sid = f"cli-{uuid.uuid4().hex[:8]}"
    args = ["--workspace", str(repo), "--session-id", sid, "--hooks-dir", str(repo / "x"),
            "--trust", "--trust-file", trust_file, "--"]
    probe = ("import json, subprocess, sys; out = subprocess.run([sys.executable, '-m', "
             "'initd', 'emit', 'pre_tool'], capture_output=True, text=True); "
             "print(json.dumps([out.returncode, json.loads(out.stdout)['results'][0]]))")
    try:
        from tests.support.harness import run
        first = run([*args, sys.executable, "-c", probe], cwd=str(repo))
        code, result = json.loads(first.stdout_lines[0])
        assert code == 2 and "not trusted yet" in result["error"]  # on_error: deny blocks
        assert not (repo / "ran").exists()
        approved = initd("hooks", "trust", "--workspace", str(repo), "--hooks-dir",
                         str(repo / "x"), "--trust-file", trust_file)
        assert approved.returncode == 0 and approved.stdout.startswith("new")
        second = run([*args, sys.executable, "-c", probe], cwd=str(repo))
        code, result = json.loads(second.stdout_lines[0])
        assert code == 2 and result["status"] == "blocked" and (repo / "ran").exists()
        (repo / ".nyzhi" / "config.toml").write_text(
            '[[agent.hooks]]\nevent = "pre_tool"\ncommand = "touch ran2"\n')
        third = run([*args, sys.executable, "-c", probe], cwd=str(repo))
        assert "changed since it was trusted" in json.loads(third.stdout_lines[0])[1]["error"]
        assert not (repo / "ran2").exists()
    finally:
        forget_session(sid)


@pytest.mark.slow
def test_sessions_and_config_verbs(service: str, repo: Path) -> None:
    initd("emit", "after_turn", sock=service)
    listed = initd("sessions")
    assert listed.returncode == 0 and str(repo) in listed.stdout
    found = [s for s in json.loads(initd("sessions", "--json").stdout)
             if s["workspace"] == str(repo)]
    assert found and found[0]["status"] == "active" and found[0]["events"] == 1
    out = initd("config", "set-auto-commit", "true", "--workspace", str(repo))
    assert out.returncode == 0 and "added the git-commit hook" in out.stdout
    hooks = json.loads((repo / ".autoagent" / "config.json").read_text())["hooks"]
    assert hooks["PostExecutionEnd"][0]["type"] == "git-commit"
    assert initd("config", "set-auto-push", "maybe", "--workspace",
                 str(repo)).returncode == 125


@pytest.mark.slow
def test_a_service_killed_during_an_awaited_webhook_leaves_a_consistent_record(
        repo: Path) -> None:
    """initd as PID 1; the hook service is SIGKILLed while an awaited webhook waits for
    its callback: the session record says the event was running, and once the service
    is back, that it was interrupted."""
    from tests.support.harness import Initd

    (repo / "pipeline.yaml").write_text("""
hooks:
  on_stage_complete:
    - type: webhook
      url: "http://127.0.0.1:9/approval"
      retries: 100000
      retry_delay: 0.05
      await: true
      callback_port: 0
""")
    sid = f"cli-{uuid.uuid4().hex[:8]}"
    init = Initd(["--workspace", str(repo), "--session-id", sid, "--hooks-dir",
                  str(repo / "x"), "--", "sleep", "1000"])
    try:
        service = service_process(init)
        wait_for(lambda: _answers(init.socket), what="the API")
        threading.Thread(target=lambda: _quiet(init.socket), daemon=True).start()
        record = Path(ROOT_HOME, ".discobot", "sessions", f"{sid}.json")
        wait_for(lambda: record.exists() and json.loads(record.read_text()).get("running"),
                 what="the event running")
        service.send_signal(signal.SIGKILL)
        wait_for(lambda: next((p for p in init.descendants() if is_service(p)
                               and p.pid != service.pid), None), timeout=15,
                 what="the restarted service")
        wait_for(lambda: _answers(init.socket), timeout=15, what="the API again")
        data = json.loads(record.read_text())  # valid JSON, whatever happened when
        assert data["running"] == {} and data["status"] == "active"
        events = Path(ROOT_HOME, ".discobot", "sessions", f"{sid}.events.jsonl")
        [line] = [json.loads(x) for x in events.read_text().splitlines()]
        assert line["event"] == "stage_complete" and line["interrupted"] is True
        init.signal(signal.SIGTERM)
        init.wait()
        assert json.loads(record.read_text())["status"] == "interrupted"  # by signal 15
    finally:
        init.kill()
        forget_session(sid)


def _answers(sock: str) -> bool:
    try:
        return call(sock, "GET", "/v1/health")[0] == 200
    except Exception:
        return False


def _quiet(sock: str) -> None:
    try:
        call(sock, "POST", "/v1/events/on_stage_complete", {"stage": "plan"})
    except Exception:
        pass  # the service dies under it: that is the point
