"""supervisor/shutdown.py: the end of a boot, stopped within one budget. On real objects:
background session hooks (hooks/phase.py) running real hook processes, a real hook
service child (hookservice.py) whose session holds a hook that ignores TERM, a state
file's lock held by another process. Deadlines are on events, never on elapsed time."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from initd.config import log
from initd.hooks import phase
from initd.hooks.model import Hook
from initd.process import spawn
from initd.process.procfs import stat_fields
from initd.state import statefile
from initd.state.agentfs.common import Unsafe
from initd.supervisor.hookservice import ServiceChild
from initd.supervisor.shutdown import FLOOR, Shutdown
from tests.hooks.support import add_hook, forget_session, hook_context

PIDS = Path("/sys/fs/cgroup/pids")
BUDGET = 2.0  # seconds of --grace where the service's hook, ignoring TERM, waits it out


def wait_for(what: str, check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def gone(pid: int) -> bool:
    """Exited: no /proc entry, or a zombie waiting for its reaper."""
    fields = stat_fields(pid)
    return fields is None or fields[0] in (b"Z", b"X")


@pytest.fixture(autouse=True)
def not_stopping() -> Iterator[None]:
    """begin() sets statefile.STOPPING for this whole process: clear before and after."""
    statefile.STOPPING.clear()
    yield
    statefile.STOPPING.clear()


def test_the_budget_starts_once() -> None:
    """The stop signal, or the agent's end, starts the budget; a second begin, or finish
    after it, never moves its deadline (a later signal would stretch the stop)."""
    rest = Shutdown(grace=5.0)
    assert rest.deadline is None
    rest.begin()
    first = rest.deadline
    assert first is not None
    rest.begin()
    assert rest.deadline == first
    rest.finish()  # nothing was started: nothing to stop, and it returns
    assert rest.deadline == first


def test_finish_alone_begins_the_budget() -> None:
    """An agent that ended by itself: finish starts the budget as begin would."""
    rest = Shutdown(grace=5.0)
    rest.finish()
    assert rest.deadline is not None
    assert statefile.STOPPING.is_set()


def test_a_writer_waiting_for_a_lock_gives_up_once_the_stop_begins(tmp_path: Path) -> None:
    """A state file's lock held by someone else (the agent may hold one for ever): a
    writer waiting for it stops waiting when the stop begins, saying why, so root's
    writers never hold the stop past its budget."""
    path, ready = tmp_path / "status.lock", tmp_path / "held"
    path.touch()
    holder = subprocess.Popen(["flock", str(path), "sh", "-c", f"touch {ready}; exec sleep 1000"])
    fd = os.open(path, os.O_RDWR)
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            statefile.lock(fd, 600.0, lambda why: f"status.json is locked: {why}")
        except BaseException as err:  # (what it raised is the verdict)
            errors.append(err)

    try:
        wait_for("the holder's lock", ready.exists)
        waiting = threading.Thread(target=writer, daemon=True)
        waiting.start()
        assert statefile.STOPPING.is_set() is False
        Shutdown(grace=5.0).begin()
        waiting.join(30)
        assert not waiting.is_alive(), "the writer still waits for the lock"
    finally:
        holder.kill()
        holder.wait()
        os.close(fd)
    assert len(errors) == 1 and isinstance(errors[0], Unsafe), errors
    assert "initd is stopping" in str(errors[0])


def lingering_hook(directory: Path, name: str) -> tuple[Hook, Path, Path, Path]:
    """A background session hook that says it started, notes its TERM and then lingers
    until the test releases it: (hook, started, termed, release)."""
    started, termed, release = (directory / f"{name}.{what}"
                                for what in ("started", "termed", "release"))
    path = add_hook(directory, f"{name}.sh",
                    f"trap 'touch {termed}; while [ ! -e {release} ]; do sleep 0.01; done;"
                    f" exit 0' TERM\ntouch {started}\nwhile :; do sleep 0.01; done",
                    type="session", blocking=False)
    return (Hook(id=name, name=name, type="session", path=str(path), directory=str(directory),
                 blocking=False), started, termed, release)


def test_background_hooks_and_the_lifecycle_are_stopped_beside_each_other(
        tmp_path: Path) -> None:
    """begin() tells the background session hooks and the devcontainer's commands to stop
    and returns at once, beside the agent's own stop: each is stopped in a thread of its
    own, at the same time (both hooks have their TERM while neither has ended), and the
    hooks queued behind a stopped one never run. finish() waits for both."""
    ws = tmp_path / "ws"
    ws.mkdir()
    sid = f"shutdown-{uuid.uuid4().hex[:8]}"
    ctx = hook_context(ws, sid)
    first, first_started, first_termed, first_release = lingering_hook(tmp_path, "10-first")
    other, other_started, other_termed, other_release = lingering_hook(tmp_path, "10-other")
    never = tmp_path / "never-ran"
    queued = add_hook(tmp_path, "20-queued.sh", f"touch {never}", type="session",
                      blocking=False)
    try:
        background = phase.BackgroundHooks(
            [first, Hook(id="20-queued", name="queued", type="session", path=str(queued),
                         directory=str(tmp_path), blocking=False)], ctx)
        lifecycle = phase.BackgroundHooks([other], ctx)  # (stopped the same way: stop())
        wait_for("both hooks running", lambda: first_started.exists() and other_started.exists())
        rest = Shutdown(grace=30.0)
        rest.background, rest.lifecycle = background, lifecycle  # type: ignore[assignment]
        rest.begin()  # returns while both still run
        wait_for("TERM to both hooks", lambda: first_termed.exists() and other_termed.exists())
        assert background.thread.is_alive() and lifecycle.thread.is_alive()
        first_release.touch()
        other_release.touch()
        rest.finish()
        assert not background.thread.is_alive() and not lifecycle.thread.is_alive()
        assert not never.exists(), "a hook queued behind a stopped one ran"
    finally:
        first_release.touch()
        other_release.touch()
        forget_session(sid)


SERVICE_HOOK = """
import os, signal, sys, time
os.setpgid(0, 0)  # a hook: a group of its own, in the service's session
signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    time.sleep(1)
"""


def service(tmp_path: Path, ignores_term: bool) -> tuple[ServiceChild, Path, Path]:
    """A hook service started as root's supervisor starts one (a session of its own, its
    listening socket and channel passed), that leaves a TERM-ignoring hook in its session:
    (the service, its socket's path, the file the hook's pid appears in)."""
    hook_pid, hook = tmp_path / "hook.pid", tmp_path / "hook.py"
    hook.write_text(SERVICE_HOOK)
    trap = "trap '' TERM; " if ignores_term else ""
    script = f"{trap}{sys.executable} {hook} {hook_pid} & while :; do sleep 0.01; done"
    path = tmp_path / "initd.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen()
    svc = ServiceChild(spawn.Spec(argv=("sh", "-c", script, "sh"), env=dict(os.environ),
                                  cwd="/"),
                       listener=listener, guards=None, precommit=None, window=60.0,
                       grace=30.0, log=log.get())
    svc.start()
    wait_for("the service's hook", hook_pid.exists)
    return svc, path, hook_pid


@pytest.mark.slow
def test_the_service_gets_at_least_the_floor_when_the_agent_took_the_grace(
        tmp_path: Path) -> None:
    """The agent took the whole budget: the hook service still gets FLOOR, then KILL, to
    its group and its whole session together (a hook there that ignores TERM goes too);
    then its socket is closed and its file gone."""
    svc, path, hook_pid = service(tmp_path, ignores_term=True)
    pid, hook = svc.child.pid if svc.child else 0, int(hook_pid.read_text())
    try:
        rest = Shutdown(grace=0.0)
        rest.service = svc
        rest.begin()
        rest.finish()
        assert svc.grace == FLOOR  # what it was given: the floor, not what was left
        assert svc.last_code == 128 + 9  # it ignored TERM: killed at the floor's end
        assert gone(pid) and gone(hook), "the service's group or session outlived finish()"
        assert not path.exists() and svc.listener.fileno() == -1
    finally:
        for left in (pid, hook):
            if not gone(left):
                os.kill(left, 9)


@pytest.mark.slow
def test_the_service_gets_what_is_left_of_the_budget(tmp_path: Path) -> None:
    """With time left, the service is given what is left of the same budget (never a
    new grace of its own), and a service that exits on TERM ends with TERM's code; the
    hook it left in its session, ignoring TERM, is killed by the same deadline."""
    svc, path, hook_pid = service(tmp_path, ignores_term=False)
    pid, hook = svc.child.pid if svc.child else 0, int(hook_pid.read_text())
    try:
        rest = Shutdown(grace=BUDGET)
        rest.service = svc
        rest.finish()
        assert FLOOR <= svc.grace <= BUDGET
        assert svc.last_code == 128 + 15
        assert gone(pid) and gone(hook)
        assert not path.exists()
    finally:
        for left in (pid, hook):
            if not gone(left):
                os.kill(left, 9)


class Service:
    """What finish() asks of a hook service, noted in order."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def stop(self, sig: int, grace: float) -> int:
        self.calls.append(f"stop {sig}")
        return 0

    def close(self) -> None:
        self.calls.append("close")


def test_finish_stops_the_service_once() -> None:
    """finish() is called on every way out of a boot; the service is stopped (TERM) and
    closed once, in that order."""
    svc = Service()
    rest = Shutdown(grace=1.0)
    rest.service = svc  # type: ignore[assignment]
    rest.finish()
    rest.finish()
    assert svc.calls == ["stop 15", "close"]


@pytest.fixture
def pids_cgroup() -> Iterator[Path]:
    """A pids cgroup of the test's own, as a pod's pids limit would be."""
    if not os.access(PIDS / "cgroup.procs", os.W_OK):
        pytest.skip(f"cannot run here: no writable pids cgroup at {PIDS} (cgroup v1) on this host")
    path = PIDS / f"initd-test-{uuid.uuid4().hex[:8]}"
    path.mkdir()
    yield path
    (path / "pids.max").write_text("max")
    for _ in range(100):  # empty once the script is gone
        try:
            path.rmdir()
            break
        except OSError:
            time.sleep(0.05)


NO_THREAD = """
import sys, threading
from pathlib import Path
from initd.supervisor.shutdown import Shutdown

cgroup = Path(sys.argv[1])
(cgroup / "cgroup.procs").write_text("0")
(cgroup / "pids.max").write_text((cgroup / "pids.current").read_text())
try:
    threading.Thread(target=print).start()
    print("a thread started: the limit did not hold")
    sys.exit(3)
except RuntimeError:
    pass
ran = []

class Stops:
    def __init__(self, name):
        self.name = name

    def stop(self):
        ran.append((self.name, threading.current_thread().name))

rest = Shutdown(1.0)
rest.background, rest.lifecycle = Stops("background"), Stops("lifecycle")
rest.begin()
print(ran)  # both, before begin returned
rest.finish()
print(len(ran))  # and never again
"""


def test_without_a_thread_each_stop_runs_in_line(pids_cgroup: Path) -> None:
    """A pids limit reached: no thread for the stops, so each runs in line, one after
    the other, and the shutdown still ends (never a crash)."""
    out = subprocess.run([sys.executable, "-c", NO_THREAD, str(pids_cgroup)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines() == [
        "[('background', 'MainThread'), ('lifecycle', 'MainThread')]", "2"], out.stderr
