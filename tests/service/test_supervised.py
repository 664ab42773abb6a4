"""The hook service as initd's supervised child (opt-in with --socket for now)."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.hooks.support import ROOT_HOME, add_hook, checker, forget_session, git_repo, settle
from tests.service.support import call, is_service, service_process
from tests.support.harness import PRINT_SIGNALS, wait_for


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[tuple[Path, str, str]]:
    repo = git_repo(tmp_path / "ws", identity=False)
    sid = f"sup-{uuid.uuid4().hex[:8]}"
    yield repo, sid, str(tmp_path / "run" / "initd.sock")
    forget_session(sid)


def args(repo: Path, sid: str, sock: str, *cmd: str) -> list[str]:
    return ["--workspace", str(repo), "--session-id", sid, "--hooks-dir", str(repo / "none"),
            "--socket", sock, "--", *cmd]


@pytest.mark.slow
def test_a_relative_workspace_is_the_same_place_for_the_service(initd, ws) -> None:
    """--workspace ws from ws's parent: the service (which runs from /) once looked in
    ws/ws, and file hooks silently never ran. Every path setting is made absolute once."""
    repo, sid, sock = ws
    checker(repo, "10-a.sh", "*.a", "BAD")
    (repo / "x.a").write_text("BAD\n")
    settle()
    probe = ("import json; from initd.commands import client; "
             "print(json.dumps(client.call('POST', '/v1/turn', {'trigger': 'user'})[1]))")
    relative = ["--workspace", repo.name, *args(repo, sid, sock)[2:]]
    init = initd([*relative, sys.executable, "-c", probe], cwd=str(repo.parent))
    assert init.wait() == 0, init.stderr
    assert json.loads(init.stdout_lines[-1])["action"] == "reprompt"


@pytest.mark.slow
def test_the_agent_reaches_the_api_through_initd_socket(initd, ws) -> None:
    repo, sid, sock = ws
    checker(repo, "10-a.sh", "*.a", "BAD")
    (repo / "x.a").write_text("BAD\n")
    settle()
    probe = ("import json, os; from initd.commands import client; "
             "print(os.environ['INITD_SOCKET']); "
             "print(json.dumps(client.call('POST', '/v1/turn', {'trigger': 'user'})[1]))")
    init = initd(args(repo, sid, sock, sys.executable, "-c", probe))
    assert init.wait() == 0, init.stderr
    assert init.stdout_lines[0] == sock
    assert json.loads(init.stdout_lines[1])["action"] == "reprompt"
    assert not os.path.exists(sock)  # the service went with initd, and took its socket


@pytest.mark.slow
def test_a_killed_service_is_restarted_and_the_agent_keeps_running(initd, ws) -> None:
    repo, sid, sock = ws
    init = initd(args(repo, sid, sock, "sleep", "1000"))
    first = service_process(init)
    wait_for(lambda: os.path.exists(sock), what="socket")
    agent = wait_for(lambda: next((p for p in init.descendants() if p.name() == "sleep"),
                                  None), what="the agent")
    first.send_signal(signal.SIGKILL)
    second = wait_for(lambda: next((p for p in init.descendants() if is_service(p)
                                    and p.pid != first.pid), None), timeout=15,
                      what="a restarted service")
    assert second.pid != first.pid
    wait_for(lambda: _health(sock), timeout=15, what="the restarted API")
    assert agent.is_running() and agent.status() != psutil.STATUS_ZOMBIE
    init.signal(signal.SIGTERM)
    assert init.wait() == 128 + signal.SIGTERM
    assert "restarting after backoff" in init.stderr


@pytest.mark.slow
def test_killed_mid_evaluation_the_hook_stays_pending_and_is_recovered(initd, ws) -> None:
    repo, sid, sock = ws
    add_hook(repo / ".discobot" / "hooks", "10-slow.sh", "sleep 1000", type="file",
             pattern="*.slow")
    (repo / "x.slow").write_text("1\n")
    settle()
    init = initd(args(repo, sid, sock, "sleep", "1000"))
    service = service_process(init)
    wait_for(lambda: _health(sock), what="the API")
    import threading

    threading.Thread(target=lambda: _quiet_turn(sock), daemon=True).start()
    status_file = Path(ROOT_HOME, ".discobot", sid, "hooks", "status.json")
    wait_for(lambda: status_file.exists() and json.loads(status_file.read_text())["hooks"]
             .get("10-slow", {}).get("lastResult") == "running", what="the hook running")
    service.send_signal(signal.SIGKILL)
    wait_for(lambda: json.loads(status_file.read_text())["hooks"]["10-slow"].get(
        "interrupted"), timeout=20, what="recovery by the restarted service")
    status = json.loads(status_file.read_text())
    assert status["pendingHooks"] == ["10-slow"]
    assert status["hooks"]["10-slow"]["lastResult"] == "failure"
    init.signal(signal.SIGTERM)
    init.wait()


# A file hook's process that joins the service's own group (setpgid within its session)
# and ignores TERM: when the service dies, stopping that group takes the grace. Once the
# supervisor's loop waited it out: no signal was passed on to the agent meanwhile.
JOIN_SERVICE_GROUP = ("python3 -c 'import os, signal, time\n"
                      "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                      "os.setpgid(0, os.getsid(0))\n"
                      "time.sleep(1000)' </dev/null >/dev/null 2>&1 &")


@pytest.mark.slow
def test_a_service_restart_passes_signals_on_and_never_overlaps_its_group(initd, ws) -> None:
    repo, sid, sock = ws
    add_hook(repo / ".discobot" / "hooks", "10-join.sh", JOIN_SERVICE_GROUP, type="file",
             pattern="*.j")
    (repo / "x.j").write_text("1\n")
    settle()
    init = initd(["--grace", "30", *args(repo, sid, sock, *PRINT_SIGNALS,
                                         "--exit-on", "SIGTERM")])
    init.expect("^ready")
    first = service_process(init)
    wait_for(lambda: _health(sock), what="the API")
    call(sock, "POST", "/v1/turn", {"trigger": "user"})
    member = wait_for(lambda: next((p for p in init.descendants() if p.pid != first.pid
                                    and _pgid(p.pid) == first.pid), None),
                      what="the hook's process in the service's group")
    first.send_signal(signal.SIGKILL)
    # reaped (its /proc entry gone): the supervisor's loop has seen the exit
    wait_for(lambda: not os.path.exists(f"/proc/{first.pid}"), what="the service reaped")
    init.signal(signal.SIGUSR1)
    init.expect(rf"^{int(signal.SIGUSR1)}$", timeout=10)  # (a held loop: after 30 s)
    time.sleep(2)  # past the 1 s backoff: a restart that did not wait would be there
    assert member.is_running()
    assert not [p for p in init.descendants() if is_service(p)], "overlaps its group"
    member.kill()  # (the group's stop would KILL it after the grace)
    wait_for(lambda: next((p for p in init.descendants() if is_service(p)), None),
             timeout=15, what="the restarted service")
    init.signal(signal.SIGTERM)
    assert init.wait(timeout=30) == 0, init.stderr[-3000:]


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def _health(sock: str) -> bool:
    try:
        return call(sock, "GET", "/v1/health")[0] == 200
    except Exception:
        return False


def _quiet_turn(sock: str) -> None:
    try:
        call(sock, "POST", "/v1/turn", {"trigger": "user"})
    except Exception:
        pass  # the service is killed under it: that is the point


