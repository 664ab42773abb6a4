"""The hook service under initd as PID 1: on by default, readiness of the agent, health,
requests during a restart, file hooks as the agent (never root), no hook outliving its runner,
the pre-commit chain following the hooks."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.hooks.support import ROOT_HOME, add_hook, forget_session, git, git_ok
from tests.service.support import args, call, service_process, verb
from tests.support.harness import Initd, free_port, ns_pid, run, wait_for
from tests.support.users import AGENT as AGENT_USER

PY = sys.executable


@pytest.fixture
def ws() -> Iterator[tuple[Path, str]]:
    """A git workspace any user may write (pytest's tmp_path is root's, 0700)."""
    path = Path(tempfile.mkdtemp(prefix="initd-sup-"))
    git_ok(path, "init", "-q")
    git_ok(path, "config", "user.email", "agent@example.com")
    git_ok(path, "config", "user.name", "Agent")
    (path / ".discobot" / "hooks").mkdir(parents=True)
    sid = f"sup-{uuid.uuid4().hex[:8]}"
    yield path, sid
    forget_session(sid, *_agent_home())
    for home in _agent_home():  # boot with --user trusted this path for the agent's git
        subprocess.run(["runuser", "-u", AGENT_USER, "--", "git", "config", "--file",
                        f"{home}/.gitconfig", "--unset-all", "safe.directory", f"^{path}$"],
                       capture_output=True)
    shutil.rmtree(path, ignore_errors=True)


def _agent_home() -> list[str]:
    try:
        return [pwd.getpwnam(AGENT_USER).pw_dir]
    except KeyError:
        return []


def boot(initd, repo: Path, sid: str, *more: str) -> Initd:  # type: ignore[no-untyped-def]
    return initd(["--workspace", str(repo), "--session-id", sid, "--hooks-dir",
                  str(repo / "no-image"), *more])


def answer(sock: str, method: str, path: str, body: object = None) -> tuple[int, object]:
    try:
        return call(sock, method, path, body)
    except Exception:
        return 0, None


# --- on by default, off when asked, and what a bind failure does


def test_with_a_workspace_the_service_runs_on_its_own(initd, ws) -> None:
    repo, sid = ws
    init = boot(initd, repo, sid, "--", "sh", "-c", 'echo "$INITD_SOCKET"; sleep 1000')
    assert init.expect(r"^/.*").group(0) == init.socket
    service_process(init)
    code, health = call(init.socket, "GET", "/v1/health")
    assert code == 200 and health["agent"]["state"] == "running"  # type: ignore[index]
    init.signal(signal.SIGTERM)
    init.wait()


def test_tini_style_use_has_no_service_and_no_socket(initd, tmp_path: Path) -> None:
    init = initd(["--", "sh", "-c", 'echo "socket=${INITD_SOCKET-none}"'], cwd=str(tmp_path))
    assert init.wait() == 0
    assert init.stdout_lines == ["socket=none"]
    assert not os.path.exists(init.socket)


@pytest.mark.slow
def test_no_service_and_service_decide(initd, ws, tmp_path: Path) -> None:
    repo, sid = ws
    off = boot(initd, repo, sid, "-v", "--no-service", "--", "sh", "-c",
               'echo "${INITD_SOCKET-none}"')
    assert off.wait() == 0 and off.stdout_lines == ["none"]
    assert "hook service start" not in off.stderr and not os.path.exists(off.socket)
    on = initd(["-v", "--service", "--", "sh", "-c",  # no workspace, but asked for
                f'echo "$INITD_SOCKET"; {sys.executable} -m initd health >/dev/null'],
               cwd=str(tmp_path))
    assert on.wait() == 0 and on.stdout_lines == [on.socket], on.stderr
    assert "hook service start" in on.stderr  # (at the agent's first request)


@pytest.mark.slow
def test_a_socket_that_cannot_be_bound_warns_unless_the_service_was_asked_for(
        initd, ws, tmp_path: Path) -> None:
    repo, sid = ws
    blocker = tmp_path / "not-a-socket"
    blocker.write_text("mine\n")
    env = {**os.environ, "INITD_SOCKET": str(blocker)}
    args = ["--workspace", str(repo), "--session-id", sid, "--hooks-dir", str(repo / "none"),
            "--", "echo", "agent ran"]
    auto = initd(args, env=env)
    assert auto.wait() == 0 and auto.stdout_lines == ["agent ran"]
    assert "hook service not started" in auto.stderr and "is not a socket" in auto.stderr
    asked = initd(["--service", *args], env=env)
    assert asked.wait() == 125 and asked.stdout_lines == []
    assert "is not a socket: not replacing it" in asked.stderr
    assert blocker.read_text() == "mine\n"


# --- readiness and health


AGENT = """
import os, signal, socket, sys, time
while not os.path.exists(sys.argv[2]):  # listens once the test has seen it not ready
    time.sleep(0.01)
server = socket.create_server(("127.0.0.1", int(sys.argv[1])))
print("listening", flush=True)
def term(signum, frame):
    print("stopping slowly", flush=True)
    time.sleep(3)
    sys.exit(0)
signal.signal(signal.SIGTERM, term)
while True:
    conn, _ = server.accept()
    conn.sendall(b"HTTP/1.0 200 OK\\r\\nContent-Length: 0\\r\\n\\r\\n")
    conn.close()
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["port", "url"])
def test_the_agent_is_ready_when_its_port_answers(initd, ws, how: str) -> None:
    repo, sid = ws
    port = free_port()
    flag = ["--ready-port", str(port)] if how == "port" else [
        "--ready-url", f"http://127.0.0.1:{port}/healthz"]
    go = repo / ".git" / "listen-now"  # (not a blind 1.5 s: a slow boot would miss it)
    init = boot(initd, repo, sid, *flag, "--", PY, "-c", AGENT, str(port), str(go))
    service_process(init)
    # (asked early enough, the answer is "the agent has not been started yet")
    code, body = wait_for(lambda: (r := answer(init.socket, "GET", "/v1/ready"))[1] and
                          r[1].get("agent") and r, what="the agent started")  # type: ignore[union-attr]
    assert code == 503, body
    assert body["agent"]["state"] == "starting"  # type: ignore[index]
    assert "ready once" in body["error"]  # type: ignore[index]
    probe = verb("ready", sock=init.socket)  # the exec-probe form
    assert probe.returncode == 1 and "ready once" in probe.stderr
    go.touch()
    init.expect("listening")
    code, body = wait_for(lambda: (r := answer(init.socket, "GET", "/v1/ready"))[0] == 200
                          and r, what="ready")
    agent = body["agent"]  # type: ignore[index]
    assert agent["ready"] and agent["readyAt"] >= agent["startedAt"]
    assert verb("ready", sock=init.socket).returncode == 0
    alive = verb("health", sock=init.socket)
    assert alive.returncode == 0 and json.loads(alive.stdout)["agent"]["ready"]
    _, health = call(init.socket, "GET", "/v1/health")
    [real] = [p for p in init.descendants() if args(p)[1:2] == ["-c"]]
    in_container = ns_pid(real.pid)  # pids as PID 1 sees them
    assert health["agent"]["pid"] == in_container  # type: ignore[index]
    assert health["initd"]["phase"] == "running"  # type: ignore[index]
    init.signal(signal.SIGTERM)  # the agent takes 3 s to stop: not ready meanwhile
    init.expect("stopping slowly")
    code, body = wait_for(lambda: (r := answer(init.socket, "GET", "/v1/ready"))[0] == 503
                          and r, what="not ready while stopping")
    assert body["error"] == "initd is stopping"  # type: ignore[index]
    assert init.wait() == 0


@pytest.mark.slow
def test_a_request_made_while_the_service_restarts_waits_for_it(initd, ws) -> None:
    repo, sid = ws
    init = boot(initd, repo, sid, "--", "sleep", "1000")
    first = service_process(init)
    wait_for(lambda: answer(init.socket, "GET", "/v1/health")[0] == 200, what="the API")
    first.send_signal(signal.SIGKILL)
    first.wait(5)
    # The socket is root's, not the dead service's: this connects at once and waits in
    # the backlog through the 1 s backoff, instead of ECONNREFUSED.
    code, health = call(init.socket, "GET", "/v1/health")
    assert code == 200 and health["pid"] != first.pid  # type: ignore[index]
    assert health["service"]["restarts"] == 1  # type: ignore[index]
    init.signal(signal.SIGTERM)
    init.wait()


# --- no hook outlives the service that ran it


@pytest.mark.slow
def test_a_killed_services_hook_is_stopped_not_orphaned(initd, ws) -> None:
    repo, sid = ws
    add_hook(repo / ".discobot" / "hooks", "10-slow.sh", "sleep 1000",
             type="file", pattern="*.slow")
    (repo / "x.slow").write_text("1\n")
    init = boot(initd, repo, sid, "--", "sleep", "1000")
    service = service_process(init)
    wait_for(lambda: answer(init.socket, "GET", "/v1/health")[0] == 200, what="the API")
    threading.Thread(target=answer, args=(init.socket, "POST", "/v1/turn"), daemon=True).start()
    leader = wait_for(lambda: next((p.pid for p in init.descendants() if any(
        "10-slow.sh" in arg for arg in args(p))), None), what="the hook")
    wait_for(lambda: len([p for p in psutil.process_iter() if _pgid(p.pid) == leader]) == 2,
             what="the hook's sleep")
    group = [p for p in psutil.process_iter() if _pgid(p.pid) == leader]
    assert len(group) == 2  # sh and its sleep
    status_file = Path(ROOT_HOME, ".discobot", sid, "hooks", "status.json")
    wait_for(lambda: status_file.exists() and json.loads(status_file.read_text())["hooks"]
             .get("10-slow", {}).get("pgid"), what="the hook recorded as running, with its group")
    service.send_signal(signal.SIGKILL)
    wait_for(lambda: not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE
                             for p in group), timeout=15, what="the hook's group stopped")
    # The next service records it as interrupted (the group was stopped before: by root,
    # from the dead service's session id in its memory, never from status.json's pgid).
    wait_for(lambda: json.loads(status_file.read_text())["hooks"]["10-slow"]
             .get("interrupted"), timeout=15, what="the hook recorded as interrupted")
    status = json.loads(status_file.read_text())
    entry = status["hooks"]["10-slow"]
    assert (entry["lastResult"], entry["interrupted"]) == ("failure", True)
    assert status["pendingHooks"] == ["10-slow"]
    init.signal(signal.SIGTERM)
    init.wait()
    [line] = [json.loads(line) for line in init.stderr.splitlines()
              if "outlived it" in line]
    assert line["processes"] == 2, line  # sh and its sleep


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


# --- file hooks run as the agent, always (invariant 11)


ID_HOOK = 'echo "uid=$(id -u) files=$DISCOBOT_CHANGED_FILES"'
REFUSED = ("run_as: root: file hooks run as the agent; move root work to a blocking "
           "session hook")


def test_a_root_file_hook_is_refused_when_it_loads_and_the_others_run_as_the_agent(
        initd, ws, agent_user: pwd.struct_passwd) -> None:
    repo, sid = ws
    hooks = repo / ".discobot" / "hooks"
    add_hook(hooks, "10-root.sh", ID_HOOK + "; touch /etc/initd-test-owned", type="file",
             pattern="*.r", run_as="root")
    add_hook(hooks, "20-user.sh", ID_HOOK, type="file", pattern="*.u")
    subprocess.run(["chmod", "-R", "a+rwX", str(repo)], check=True)
    init = boot(initd, repo, sid, "--log-format", "json", "--user", agent_user.pw_name,
                "--", "sleep", "1000")
    wait_for(lambda: answer(init.socket, "GET", "/v1/health")[0] == 200, what="the API")
    (repo / "a.r").write_text("1\n")
    (repo / "b.u").write_text("1\n")
    code, turn = call(init.socket, "POST", "/v1/turn", {"trigger": "user"})
    assert (code, turn["action"]) == (200, "none"), turn  # type: ignore[index]
    assert [r["hookId"] for r in turn["results"]] == ["20-user"]  # type: ignore[index]
    store = Path(agent_user.pw_dir, ".discobot", sid, "hooks")
    assert not (store / "output" / "10-root.log").exists()
    assert (store / "output" / "20-user.log").read_text() == (
        f"uid={agent_user.pw_uid} files=b.u\n")
    assert not os.path.exists("/etc/initd-test-owned")
    init.signal(signal.SIGTERM)
    init.wait()
    skipped = [json.loads(line) for line in init.stderr.splitlines()
               if line.startswith("{") and '"hook file skipped"' in line]
    assert any(e["file"] == str(hooks / "10-root.sh") and REFUSED in str(e["reason"])
               for e in skipped), init.stderr


@pytest.mark.slow
def test_without_a_user_a_root_file_hook_is_refused_all_the_same(ws) -> None:
    """The rule is the file's, not the deployment's: `initd hooks check` in CI says the
    same whoever runs the container."""
    repo, sid = ws
    add_hook(repo / ".discobot" / "hooks", "10-root.sh", ID_HOOK, type="file",
             pattern="*.r", run_as="root")
    (repo / "a.r").write_text("1\n")
    probe = ("import json; from initd.commands import client; "
             "print(json.dumps(client.call('POST', '/v1/turn', {})[1]['results']))")
    init = run(["--workspace", str(repo), "--session-id", sid, "--hooks-dir",
                str(repo / "none"), "--", PY, "-c", probe])
    assert init.code == 0, init.stderr
    assert json.loads(init.stdout_lines[0]) == []
    assert not Path(ROOT_HOME, ".discobot", sid, "hooks", "output", "10-root.log").exists()


# --- the pre-commit chain follows the hooks


@pytest.mark.slow
def test_a_pre_commit_hook_added_mid_session_joins_the_chain_at_the_next_turn(
        initd, ws) -> None:
    repo, sid = ws
    init = boot(initd, repo, sid, "--", "sleep", "1000")
    wait_for(lambda: answer(init.socket, "GET", "/v1/health")[0] == 200, what="the API")
    script = repo / ".git" / "hooks" / "pre-commit"
    assert "(none yet" in script.read_text()
    marker = repo / "ran.txt"
    add_hook(repo / ".discobot" / "hooks", "50-check.sh", f"echo checked > {marker}",
             type="pre-commit", name="Late check")
    code, _ = call(init.socket, "POST", "/v1/turn", {"trigger": "user"})
    assert code == 200
    assert "50-check" in script.read_text()
    (repo / "f.txt").write_text("x\n")
    git_ok(repo, "add", "f.txt")
    out = git(repo, "commit", "-qm", "x")
    assert out.returncode == 0, out.stderr
    assert marker.read_text() == "checked\n"
    # and removed again: it leaves the chain
    (repo / ".discobot" / "hooks" / "50-check.sh").unlink()
    call(init.socket, "POST", "/v1/turn", {"trigger": "user"})
    assert "50-check" not in script.read_text()
    init.signal(signal.SIGTERM)
    init.wait()


# --- a workspace that is not a git repository; a socket already being served


def test_no_git_repository_is_fine_without_file_hooks_and_clear_with_them(initd) -> None:
    plain = Path(tempfile.mkdtemp(prefix="initd-nogit-"))
    sid = f"sup-{uuid.uuid4().hex[:8]}"
    try:
        init = initd(["--workspace", str(plain), "--session-id", sid, "--hooks-dir",
                      str(plain / "none"), "--", "sleep", "1000"])
        wait_for(lambda: answer(init.socket, "GET", "/v1/health")[0] == 200, what="the API")
        code, turn = call(init.socket, "POST", "/v1/turn", {"trigger": "user"})
        assert (code, turn["action"]) == (200, "none")  # type: ignore[index]
        add_hook(plain / ".discobot" / "hooks", "10-f.sh", "true", type="file", pattern="*")
        code, body = call(init.socket, "POST", "/v1/turn", {"trigger": "user"})
        assert code == 422
        assert "need the workspace to be a git repository" in body["error"]  # type: ignore[index]
        assert "run git init there" in body["error"]  # type: ignore[index]
        init.signal(signal.SIGTERM)
        init.wait()
    finally:
        forget_session(sid)
        shutil.rmtree(plain, ignore_errors=True)


@pytest.mark.slow
def test_a_socket_another_initd_serves_is_never_taken_over(initd, ws) -> None:
    repo, sid = ws
    first = boot(initd, repo, sid, "--", "sleep", "1000")
    first_service = service_process(first)
    wait_for(lambda: answer(first.socket, "GET", "/v1/health")[0] == 200, what="the API")
    env = {**os.environ, "INITD_SOCKET": first.socket}
    second = initd(["--workspace", str(repo), "--session-id", f"{sid}-2", "--hooks-dir",
                    str(repo / "none"), "--", "echo", "second agent ran"], env=env)
    assert second.wait() == 0 and second.stdout_lines == ["second agent ran"]
    assert "is in use: another initd" in second.stderr
    code, health = call(first.socket, "GET", "/v1/health")  # still the first one's
    assert code == 200 and health["pid"] == ns_pid(first_service.pid)  # type: ignore[index]
    first.signal(signal.SIGTERM)
    first.wait()
    forget_session(f"{sid}-2")


def test_the_service_gets_initds_settings_and_no_secret(initd, ws, tmp_path: Path) -> None:
    """Flags given to initd are not on the service's command line: they reach it as the
    INITD_* variables its settings read. Secrets never reach it at all."""
    repo, sid = ws
    env = {**os.environ, "INITD_SOCKET": str(tmp_path / "s.sock"), "DISCOBOT_SECRET": "x"}
    init = initd(["--workspace", str(repo), "--session-id", sid, "--hooks-dir",
                  str(repo / "none"), "--grace", "3", "--trust", "--trust-file",
                  str(tmp_path / "t.json"), "--secret", "MY_TOKEN", "--", "sleep", "1000"],
                 env={**env, "MY_TOKEN": "y"})
    service = service_process(init)
    environ = dict(item.split("=", 1) for item in Path(f"/proc/{service.pid}/environ")
                   .read_bytes().decode().split("\0") if "=" in item)
    assert (environ["INITD_GRACE"], environ["INITD_TRUST"], environ["INITD_TRUST_FILE"]) == (
        "3", "1", str(tmp_path / "t.json"))
    assert "MY_TOKEN" not in environ and "DISCOBOT_SECRET" not in environ
    assert environ["INITD_SECRETS"] == "DISCOBOT_SECRET,MY_TOKEN"  # the default, and more
    init.signal(signal.SIGTERM)
    init.wait()


# --- a fork that fails (a pids cgroup at its limit) while the service restarts

PIDS = Path("/sys/fs/cgroup/pids")


@pytest.fixture
def pids_cgroup() -> Iterator[Path]:
    """A pids cgroup of the test's own, as a pod's pids limit would be."""
    if not os.access(PIDS / "cgroup.procs", os.W_OK):
        pytest.skip(f"cannot run here: no writable pids cgroup at {PIDS} (cgroup v1) on this host")
    path = PIDS / f"initd-test-{uuid.uuid4().hex[:8]}"
    path.mkdir()
    yield path
    (path / "pids.max").write_text("max")
    for _ in range(100):  # empty once initd's tree is gone
        try:
            path.rmdir()
            break
        except OSError:
            time.sleep(0.05)


@pytest.mark.slow
def test_a_fork_failure_while_the_service_restarts_never_takes_the_agent_down(
        initd, ws, pids_cgroup: Path) -> None:
    """The service is killed, and no process can be made: initd says so, keeps the agent
    and its signals, and brings the service back once forks work again (it used to die
    with 125 and take the agent down)."""
    repo, sid = ws
    procs = pids_cgroup / "cgroup.procs"

    def enter() -> None:
        procs.write_text(str(os.getpid()))

    init = initd(["-v", "--workspace", str(repo), "--session-id", sid, "--hooks-dir",
                  str(repo / "no-image"), "--", "sleep", "1000"], preexec_fn=enter)
    first = service_process(init)
    agent = wait_for(lambda: next((p for p in init.descendants() if p.name() == "sleep"),
                                  None), what="the agent")
    (pids_cgroup / "pids.max").write_text("1")  # from now on: no fork, no thread
    first.kill()
    wait_for(lambda: "hook-service" in init.stderr and "Resource temporarily unavailable"
             in init.stderr, timeout=15, what="a failed restart of the service")
    time.sleep(1)
    assert init.proc.poll() is None, init.stderr  # initd is alive
    assert agent.is_running() and agent.status() != psutil.STATUS_ZOMBIE
    (pids_cgroup / "pids.max").write_text("max")
    wait_for(lambda: next((p for p in init.descendants() if p.pid != first.pid and
                           "service" in " ".join(args(p))), None), timeout=30,
             what="the service back")
    init.signal(signal.SIGTERM)
    assert init.wait() == 128 + signal.SIGTERM, init.stderr[-3000:]


NO_THREAD = """
import sys, threading
from pathlib import Path
from initd.config import log
from initd.supervisor import readiness
from initd.hooks import phase
from initd.hooks.model import Hook
from initd.process import spawn as proc
from initd.supervisor.backoff import Backoff
from initd.config.values import Restart
from initd.supervisor.supervised import Supervised
from tests.hooks.support import hook_context

cgroup, workspace, sid = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
ctx = hook_context(workspace, sid)
hook = Hook(id="30-bg", name="bg", type="session", path="/bin/true",
            directory=str(workspace), blocking=False)
(cgroup / "cgroup.procs").write_text("0")
(cgroup / "pids.max").write_text((cgroup / "pids.current").read_text())
try:
    threading.Thread(target=print).start()
    print("a thread started: the limit did not hold")
    sys.exit(3)
except RuntimeError:
    pass
background = phase.BackgroundHooks([hook], ctx)  # no thread: run now (its fork fails too)
background.stop()
agent = Supervised("agent", proc.Spec(argv=("sleep", "60"), env={}, cwd="/"),
                   Restart.NEVER, Backoff(0, 60.0), 1.0, log.get(), ready_check=lambda: True)
current = int((cgroup / "pids.current").read_text())
(cgroup / "pids.max").write_text(str(current + 1))  # room for the agent, not a thread
agent.start()
assert agent.state.value == "running", agent.state
agent.stop(15)
"""


def test_no_thread_at_boot_is_one_line_never_a_crash(ws, pids_cgroup: Path) -> None:  # type: ignore[no-untyped-def]
    """A pids limit reached before the background session hooks' thread or the readiness
    probe's: the hooks run inline (here their fork fails too: recorded, not lost) and the
    agent counts as ready once started; each said in one line, no traceback."""
    repo, sid = ws
    out = subprocess.run([PY, "-c", NO_THREAD, str(pids_cgroup), str(repo), sid],
                         capture_output=True, text=True, timeout=60,
                         cwd=str(Path(__file__).resolve().parents[2]))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    assert "background session hooks run before the agent" in out.stderr
    assert "readiness not probed" in out.stderr
    status = json.loads(Path(ROOT_HOME, ".discobot", sid, "hooks", "status.json").read_text())
    assert status["hooks"]["30-bg"]["lastResult"] == "failure"  # its fork failed: recorded


@pytest.mark.slow
def test_the_agent_starts_beside_the_service_and_its_first_request_waits(initd, ws) -> None:  # type: ignore[no-untyped-def]
    """The agent never waits for the hook service (it used to, ~150 ms a boot): the
    supervisor starts both, and the agent's first request, made before the service
    serves, waits in the socket's backlog and is answered."""
    repo, sid = ws
    out = repo / "health.json"
    init = boot(initd, repo, sid, "-v", "--log-format", "json", "--", "sh", "-c",
                f"{PY} -m initd health --timeout 30 > {out}")
    assert init.wait(60) == 0, init.stderr
    assert json.loads(out.read_text())["status"] == "ok"
    lines = [json.loads(line) for line in init.stderr.splitlines() if line.startswith("{")]
    order = [(line.get("service"), line["event"]) for line in lines
             if line["event"] in ("started", "ready") and line.get("service")]
    assert order.index(("agent", "started")) < order.index(("hook-service", "ready")), order
