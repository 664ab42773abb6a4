"""The control API over a real Unix socket: turns, the loop guard, 409 and cancel."""

from __future__ import annotations

import json
import os
import pwd
import signal
import socket
import stat
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.hooks.support import ROOT_HOME, add_hook, checker, forget_session, git_repo, settle
from tests.service.support import INITD, call, start, verb


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "ws", identity=False)


@pytest.fixture
def service(repo: Path, tmp_path: Path) -> Iterator[str]:
    sid = f"api-{uuid.uuid4().hex[:8]}"
    sock = str(tmp_path / "initd.sock")
    checker(repo, "10-a.sh", "*.a", "BAD", name="Hook-A")
    checker(repo, "20-b.sh", "*.b", "BAD", name="Hook-B")
    add_hook(repo / ".discobot" / "hooks", "30-slow.sh", "echo $$ > slow.pid; sleep 1000 & wait",
             type="file", pattern="*.slow")
    proc = start(sock, str(repo), sid)
    yield sock
    proc.send_signal(signal.SIGTERM)
    proc.wait(10)
    forget_session(sid)


def test_health_hooks_status(service: str) -> None:
    assert call(service, "GET", "/v1/health")[1]["status"] == "ok"
    code, hooks = call(service, "GET", "/v1/hooks")
    assert code == 200 and [h["id"] for h in hooks["hooks"]] == ["10-a", "20-b", "30-slow"]
    assert call(service, "GET", "/v1/status")[1]["pendingHooks"] == []


def test_the_specs_example_over_the_socket(service: str, repo: Path) -> None:
    (repo / "x.a").write_text("BAD\n")
    (repo / "y.b").write_text("fine\n")
    settle()
    code, turn = call(service, "POST", "/v1/turn", {"trigger": "user"})
    assert code == 200
    assert (turn["action"], turn["attempt"], turn["pending"]) == ("reprompt", 1,
                                                                 ["10-a", "20-b"])
    assert turn["message"].startswith('[Discobot Hook Failed] "Hook-A" (pattern: *.a)')
    assert turn["message"].endswith("(Attempt 1/3)")
    (repo / "x.a").write_text("fixed\n")
    settle()
    code, turn = call(service, "POST", "/v1/turn", {"trigger": "hook"})
    assert (turn["action"], turn["pending"]) == ("none", [])
    assert [r["hookId"] for r in turn["results"]] == ["10-a", "20-b"]
    code, out = call(service, "GET", "/v1/hooks/10-a/output")
    assert (code, out["output"]) == (200, "ok\n")


@pytest.mark.slow
def test_loop_guard_third_allowed_fourth_refused_user_turn_resets(service: str,
                                                                  repo: Path) -> None:
    (repo / "x.a").write_text("BAD\n")
    settle()
    attempts = []
    for trigger in ("user", "hook", "hook", "hook"):
        turn = call(service, "POST", "/v1/turn", {"trigger": trigger})[1]
        attempts.append((turn["action"], turn["attempt"], turn["evaluation"]))
    assert attempts == [("reprompt", 1, "reprompt"), ("reprompt", 2, "reprompt"),
                        ("reprompt", 3, "reprompt"), ("none", None, "loop-guard")]
    turn = call(service, "POST", "/v1/turn", {"trigger": "user"})[1]
    assert (turn["action"], turn["attempt"]) == ("reprompt", 1)
    assert turn["pending"] == ["10-a"]  # kept through the guard


def test_a_turn_during_an_evaluation_is_409_and_cancel_stops_it(service: str,
                                                                repo: Path) -> None:
    (repo / "x.slow").write_text("1\n")
    settle()
    first: dict[str, object] = {}
    worker = threading.Thread(target=lambda: first.update(
        answer=call(service, "POST", "/v1/turn", {"trigger": "user"})))
    worker.start()
    deadline = time.monotonic() + 10
    while call(service, "GET", "/v1/status")[1]["hooks"].get("30-slow", {}).get(
            "lastResult") != "running":
        assert time.monotonic() < deadline, "the slow hook never started"
        time.sleep(0.05)
    code, body = call(service, "POST", "/v1/turn", {"trigger": "user"})
    assert code == 409 and "POST /v1/turn/cancel" in body["error"]
    assert call(service, "POST", "/v1/turn/cancel") == (200, {"cancelled": True})
    worker.join(15)
    code, answer = first["answer"]  # type: ignore[misc]
    assert (code, answer["evaluation"], answer["pending"]) == (200, "cancelled", ["30-slow"])
    leader = int((repo / "slow.pid").read_text())  # the hook's group: nobody left alive
    assert not [p for p in psutil.process_iter(["pid"]) if _pgid(p.pid) == leader
                and p.status() != psutil.STATUS_ZOMBIE]
    assert call(service, "POST", "/v1/turn/cancel") == (200, {"cancelled": False})


@pytest.mark.parametrize(("method", "path", "body", "status"), [
    ("GET", "/v1/nope", None, 404),
    ("DELETE", "/v1/health", None, 405),
    ("GET", "/v1/turn", None, 405),
    ("POST", "/v1/turn", [1], 400),
    ("POST", "/v1/turn", {"trigger": "robot"}, 400),
    ("GET", "/v1/hooks/none/output", None, 404),
    ("POST", "/v1/hooks/none/rerun", None, 404),
])
def test_errors_are_json_with_a_message(service: str, method: str, path: str, body: object,
                                        status: int) -> None:
    code, answer = call(service, method, path, body)
    assert code == status and isinstance(answer["error"], str) and answer["error"]


def test_rerun_runs_one_hook(service: str, repo: Path) -> None:
    (repo / "x.a").write_text("BAD\n")
    code, answer = call(service, "POST", "/v1/hooks/10-a/rerun")
    assert (code, answer["success"], answer["exitCode"]) == (200, False, 1)


def test_a_state_dir_made_a_link_is_never_followed_and_health_says_why(
        repo: Path, tmp_path: Path) -> None:
    """The agent may turn its own state's output/ into a link: the service (as the agent,
    or root for a root hook) follows nothing; it keeps its state in memory instead, and
    /v1/health says why ("degraded"), never "internal error"."""
    sid, sock = f"api-{uuid.uuid4().hex[:8]}", str(tmp_path / "initd.sock")
    checker(repo, "10-a.sh", "*.a", "BAD", name="Hook-A")
    output = Path(ROOT_HOME, ".discobot", sid, "hooks", "output")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    output.parent.mkdir(parents=True)
    os.symlink(elsewhere, output)
    proc = start(sock, str(repo), sid)
    try:
        (repo / "x.a").write_text("BAD\n")
        code, answer = call(sock, "POST", "/v1/hooks/10-a/rerun")
        assert (code, answer["exitCode"]) == (200, 1), answer  # ran; its result in memory
        health = call(sock, "GET", "/v1/health")[1]
        assert health["status"] == "degraded"
        assert "is a symbolic link" in health["problems"][0], health
        assert call(sock, "GET", "/v1/hooks/10-a/output")[1]["output"].startswith("x.a: has BAD")
        assert list(elsewhere.iterdir()) == []
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
        forget_session(sid)


def test_socket_is_0660_and_others_cannot_connect(service: str) -> None:
    assert stat.S_IMODE(os.stat(service).st_mode) == 0o660
    nobody = pwd.getpwnam("nobody")
    probe = ("import socket, sys\ns = socket.socket(socket.AF_UNIX)\ntry:\n"
             f"    s.connect({service!r})\nexcept PermissionError:\n    sys.exit(13)\n")
    os.chmod(os.path.dirname(service), 0o755)
    out = subprocess.run(["runuser", "-u", nobody.pw_name, "--", "/usr/bin/python3", "-c",
                          probe], capture_output=True, text=True)
    assert out.returncode == 13, out.stderr
    with socket.socket(socket.AF_UNIX) as mine:  # the owner (root here) can
        mine.connect(service)


def test_agent_group_owns_the_socket(repo: Path, tmp_path: Path,
                                     agent_user: pwd.struct_passwd) -> None:
    sock = str(tmp_path / "agent.sock")
    sid = f"api-{uuid.uuid4().hex[:8]}"
    proc = start(sock, str(repo), sid, "--user", agent_user.pw_name)
    try:
        assert os.stat(sock).st_gid == agent_user.pw_gid
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
        forget_session(sid, agent_user.pw_dir)


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None




@pytest.mark.slow
def test_cli_verbs_over_the_socket(service: str, repo: Path) -> None:
    (repo / "x.a").write_text("BAD\n")
    settle()
    turn = verb("turn", sock=service)
    assert turn.returncode == 2  # re-prompt the agent
    assert json.loads(turn.stdout)["message"].startswith("[Discobot Hook Failed]")
    assert json.loads(verb("status", sock=service).stdout)["pendingHooks"] == ["10-a"]
    output = verb("hooks", "output", "10-a", sock=service)
    assert (output.returncode, output.stdout) == (0, "x.a: has BAD\n")
    rerun = verb("hooks", "rerun", "10-a", sock=service)
    assert json.loads(rerun.stdout)["exitCode"] == 1
    missing = verb("hooks", "output", "nope", sock=service)
    assert missing.returncode == 1 and "no output for hook 'nope'" in missing.stderr
    (repo / "x.a").write_text("fixed\n")
    settle()
    assert verb("turn", "--trigger", "hook", sock=service).returncode == 0


def test_cli_verbs_without_a_service_say_so(tmp_path: Path) -> None:
    out = verb("status", sock=str(tmp_path / "absent.sock"))
    assert out.returncode == 125
    assert "no hook service at" in out.stderr and "INITD_SOCKET" in out.stderr


@pytest.mark.slow
@pytest.mark.parametrize("probe", ["health", "ready"])
@pytest.mark.parametrize("how", ["never answers", "backlog full"])
def test_a_probe_against_a_service_that_cannot_answer_is_one_line_in_time(
        tmp_path: Path, probe: str, how: str) -> None:
    """A socket bound (by root) whose service is down or swamped: the probe ends within
    its --timeout with one line (it waited 10 s, past a kubelet's timeoutSeconds, and a
    full backlog's EAGAIN was a traceback). "Within its --timeout" without a clock: a probe
    given --timeout 0.5 ends while one given --timeout 120, started before it against the
    same socket, still waits (the old probe's fixed 10 s ended both together)."""
    path = str(tmp_path / "stuck.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(0 if how == "backlog full" else 8)
    filled = []
    if how == "backlog full":
        while True:
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.setblocking(False)
            try:
                conn.connect(path)
            except BlockingIOError:
                conn.close()
                break
            filled.append(conn)
    patient = subprocess.Popen([*INITD, probe, "--timeout", "120"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "INITD_SOCKET": path})
    try:
        out = verb(probe, "--timeout", "0.5", sock=path)
        still_waiting = patient.poll() is None
    finally:
        patient.kill()
        patient.wait()
        for conn in filled:
            conn.close()
        listener.close()
    assert out.returncode != 0
    assert "Traceback" not in out.stderr and len(out.stderr.splitlines()) == 1, out.stderr
    assert "no answer from the hook service" in out.stderr
    assert still_waiting  # its own --timeout ended it, not a fixed one


def test_rerun_gives_a_file_hook_the_same_inputs_as_an_evaluation(service: str, repo: Path,
                                                                   tmp_path: Path) -> None:
    dump = tmp_path / "inputs"
    add_hook(repo / ".discobot" / "hooks", "40-dump.sh",
             f'cat > {dump}.json; cp "$DISCOBOT_CHANGED_FILES_LIST" {dump}.nul',
             type="file", pattern="*.d")
    (repo / "one two.d").write_text("x\n")
    code, answer = call(service, "POST", "/v1/hooks/40-dump/rerun")
    assert (code, answer["success"]) == (200, True)
    assert json.loads(Path(f"{dump}.json").read_text())["files"] == ["one two.d"]
    assert Path(f"{dump}.nul").read_bytes() == b"one two.d\0"


def _raw(sock_path: str, request: bytes, body: bytes = b"", end: bool = True) -> int:
    """Send bytes as they are (no client library would send these); the status code.
    ``end=False`` keeps sending possible (no EOF), as a client still streaming would."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(sock_path)
        try:
            conn.sendall(request + body)
            if end:
                conn.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # it answered (and closed) before reading all of it: the answer is there
        answer = b""
        try:
            while chunk := conn.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    return int(answer.split(b" ", 2)[1])


def test_a_negative_content_length_is_400_and_nothing_is_buffered(service: str) -> None:
    """read(-1) used to read the whole stream: 256 MiB sent meant +258 MiB RSS."""
    head = b"POST /v1/turn HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"
    # the stream never ends: reading "all of it" would wait (and grow) until the timeout
    assert _raw(service, head, b"{" + b" " * 2**16, end=False) == 400


def test_a_body_nested_too_deep_is_400_not_500(service: str) -> None:
    body = b"[" * 30_000 + b"]" * 30_000  # 60,000 bytes: within MAX_BODY, too deep for json
    head = (b"POST /v1/turn HTTP/1.1\r\nHost: x\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n")
    assert _raw(service, head, body) == 400
