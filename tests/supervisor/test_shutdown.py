"""supervisor/shutdown.py: the end of a boot, within one budget. ``begin`` starts the
budget, tells root's state writers to stop waiting for locks, and stops the background
session hooks beside the agent, in a thread (it returns at once); ``finish``, after the
agent, stops the hook service with what is left of the budget (at least FLOOR), its
group and its session together, closes its socket, and waits for the rest. Real
background hooks, a real service child; deadlines on events only."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.config import log
from initd.hooks import discovery
from initd.hooks.model import Hook
from initd.hooks.phase import BackgroundHooks
from initd.process import procfs, spawn
from initd.state import statefile
from initd.state.agentfs.common import Unsafe
from initd.supervisor.hookservice import ServiceChild
from initd.supervisor.shutdown import FLOOR, Shutdown
from initd.supervisor.states import State
from tests.hooks.support import add_hook, forget_session, hook_context
from tests.support.harness import wait_for


@pytest.fixture(autouse=True)
def not_stopping() -> Iterator[None]:
    """``begin`` sets this process's STOPPING: cleared before and after each test (a
    module run before this one in the same worker may have begun a stop too)."""
    statefile.STOPPING.clear()
    yield
    statefile.STOPPING.clear()


@pytest.fixture
def sid() -> Iterator[str]:
    session = f"shutdown-{uuid.uuid4().hex[:8]}"
    yield session
    forget_session(session)


def alive(pid: int) -> bool:
    fields = procfs.stat_fields(pid)
    return fields is not None and fields[0] not in (b"Z", b"X")


def background(tmp_path: Path, sid: str) -> tuple[BackgroundHooks, int]:
    """A background session hook that, told to stop, ends only once ``go`` is there:
    (its BackgroundHooks, its pid), once it runs."""
    ws = tmp_path / "ws"
    add_hook(ws / ".discobot" / "hooks", "10-bg.sh",
             f"trap 'while [ ! -e {tmp_path}/go ]; do sleep 0.02; done; exit 0' TERM; "
             f"echo $$ > {tmp_path}/pid; while :; do sleep 0.05; done",
             type="session", blocking=False)
    found = discovery.discover([str(ws / ".discobot" / "hooks")], str(ws))
    assert [hook.id for hook in found.hooks] == ["10-bg"]
    hooks = BackgroundHooks(found.hooks, hook_context(ws, sid))
    pid = wait_for(lambda: (tmp_path / "pid").exists() and (tmp_path / "pid").read_text(),
                   what="the background hook")
    return hooks, int(str(pid))


def service(tmp_path: Path, script: str) -> tuple[ServiceChild, socket.socket]:
    """A hook service child (a shell in its place: ServiceChild's arguments are its $0…),
    started and running; and its listening socket."""
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "api.sock"))
    listener.listen()
    child = ServiceChild(spawn.Spec(argv=("sh", "-c", script), env={"PATH": "/usr/bin:/bin"},
                                    cwd="/"), listener=listener, guards=None, precommit=None,
                         window=60.0, grace=30.0, log=log.get())
    child.start()
    assert child.state is State.STARTING and child.child is not None
    return child, listener


def test_nothing_started_is_nothing_to_stop() -> None:
    shutdown = Shutdown(grace=5.0)
    shutdown.finish()
    assert shutdown.deadline is not None and statefile.STOPPING.is_set()
    shutdown.finish()  # (once)


def test_begin_starts_the_budget_once_and_tells_the_state_writers() -> None:
    shutdown = Shutdown(grace=600.0)
    assert not statefile.STOPPING.is_set()
    shutdown.begin()
    deadline = shutdown.deadline
    assert deadline is not None and statefile.STOPPING.is_set()
    shutdown.begin()  # (the agent's end after the stop signal: the same budget)
    assert shutdown.deadline == deadline


def test_the_background_hooks_are_stopped_beside_the_agent_not_before_it_returns(
        tmp_path: Path, sid: str) -> None:
    hooks, pid = background(tmp_path, sid)
    shutdown = Shutdown(grace=600.0)
    shutdown.background = hooks
    shutdown.begin()
    # begin has returned, and the hook (TERM given, waiting for go) still runs: it is
    # stopped in a thread, beside whatever the supervisor does meanwhile
    assert alive(pid)
    wait_for(lambda: hooks.cancel.is_set(), what="the hooks told to stop")
    (tmp_path / "go").touch()
    shutdown.finish()  # waits for it
    assert not alive(pid) and not hooks.thread.is_alive()


def test_the_service_gets_what_is_left_of_the_budget_and_at_least_the_floor(
        tmp_path: Path) -> None:
    child, listener = service(tmp_path, "exec sleep 1000")
    pid = child.child.pid  # type: ignore[union-attr]
    shutdown = Shutdown(grace=0.0)  # the agent took it all
    shutdown.service = child
    shutdown.finish()
    assert child.grace == FLOOR
    assert child.state is State.EXITED and not alive(pid)
    assert listener.fileno() == -1 and not (tmp_path / "api.sock").exists()


def test_a_service_stopped_early_gets_no_more_than_the_budget(tmp_path: Path) -> None:
    child, _ = service(tmp_path, "exec sleep 1000")
    shutdown = Shutdown(grace=600.0)
    shutdown.service = child
    shutdown.finish()
    assert FLOOR < child.grace <= 600.0
    assert child.last_code == 128 + signal.SIGTERM


# A service that ignores TERM and left a hook that ignores it too, in a group of its own
# in the service's session (as its hooks are).
LEAVES = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
hook = subprocess.Popen(["sleep", "1000"], process_group=0)  # (TERM ignored: inherited)
with open(sys.argv[1], "w") as f:
    f.write(str(hook.pid))
time.sleep(1000)
"""


def test_a_service_that_ignores_term_and_left_a_hook_is_ended_whole(tmp_path: Path) -> None:
    """Its group and its session, by one deadline: what ignores TERM is killed at the
    end of the floor, the service and the hook it left in its session alike."""
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "api.sock"))
    listener.listen()
    child = ServiceChild(spawn.Spec(argv=(sys.executable, "-c", LEAVES, str(tmp_path / "hook")),
                                    env={}, cwd="/"), listener=listener, guards=None,
                         precommit=None, window=60.0, grace=30.0, log=log.get())
    child.start()
    assert child.child is not None
    pid = child.child.pid
    hook = int(str(wait_for(lambda: (tmp_path / "hook").exists()
                            and (tmp_path / "hook").read_text(), what="the hook")))
    assert os.getsid(hook) == pid and os.getpgid(hook) == hook  # its session, its own group
    shutdown = Shutdown(grace=0.0)
    shutdown.service = child
    shutdown.finish()
    assert child.last_code == 128 + signal.SIGKILL
    assert not alive(pid) and not alive(hook)


def test_finish_is_once(tmp_path: Path) -> None:
    child, _ = service(tmp_path, "exec sleep 1000")
    shutdown = Shutdown(grace=0.0)
    shutdown.service = child
    shutdown.finish()
    child.state = State.RUNNING  # (were it stopped again, it would be EXITED again)
    shutdown.finish()
    assert child.state is State.RUNNING


def test_a_writer_waiting_for_a_lock_gives_up_once_the_stop_begins(tmp_path: Path) -> None:
    """What telling the state writers does: a lock another process holds (the agent may
    hold one for ever) is waited for no longer once the stop begins, saying why."""
    path, ready = tmp_path / "status.lock", tmp_path / "held"
    path.touch()
    holder = subprocess.Popen(["flock", str(path), "sh", "-c", f"touch {ready}; exec sleep 1000"],
                              start_new_session=True)  # (its sleep goes with the group)
    fd = os.open(path, os.O_RDWR)
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            statefile.lock(fd, 600.0, lambda why: f"status.json is locked: {why}")
        except BaseException as err:  # (what it raised is the verdict)
            errors.append(err)

    try:
        wait_for(ready.exists, what="the holder's lock")
        waiting = threading.Thread(target=writer, daemon=True)
        waiting.start()
        Shutdown(grace=600.0).begin()
        waiting.join(30)  # (a deadline: without the stop it waits 600 s)
        assert not waiting.is_alive(), "the writer still waits for the lock"
    finally:
        os.killpg(holder.pid, signal.SIGKILL)  # flock and its sleep, never an orphan left
        holder.wait()
        os.close(fd)
    assert len(errors) == 1 and isinstance(errors[0], Unsafe), errors
    assert "initd is stopping" in str(errors[0])


def lingering(directory: Path, name: str) -> tuple[Hook, Path, Path, Path]:
    """A background session hook that says it started, notes its TERM, then lingers until
    released: (the hook, started, termed, release)."""
    started, termed, release = (directory / f"{name}.{what}"
                                for what in ("started", "termed", "release"))
    path = add_hook(directory, f"{name}.sh",
                    f"trap 'touch {termed}; while [ ! -e {release} ]; do sleep 0.01; done;"
                    f" exit 0' TERM\ntouch {started}\nwhile :; do sleep 0.01; done",
                    type="session", blocking=False)
    return (Hook(id=name, name=name, type="session", path=str(path), directory=str(directory),
                 blocking=False), started, termed, release)


def test_the_background_hooks_and_the_lifecycle_are_stopped_side_by_side(
        tmp_path: Path, sid: str) -> None:
    """Each is stopped in a thread of its own, at once: both have their TERM while
    neither has ended (one after the other, the second would wait for the first's end);
    the hooks queued behind the one stopped never run; finish waits for both."""
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = hook_context(ws, sid)
    first, first_started, first_termed, first_release = lingering(tmp_path, "10-first")
    other, other_started, other_termed, other_release = lingering(tmp_path, "10-other")
    never = tmp_path / "never-ran"
    queued = add_hook(tmp_path, "20-queued.sh", f"touch {never}", type="session",
                      blocking=False)
    try:
        hooks = BackgroundHooks([first, Hook(id="20-queued", name="queued", type="session",
                                             path=str(queued), directory=str(tmp_path),
                                             blocking=False)], ctx)
        lifecycle = BackgroundHooks([other], ctx)  # (stopped the same way: its stop())
        wait_for(lambda: first_started.exists() and other_started.exists(), 30,
                 what="both running")
        shutdown = Shutdown(grace=600.0)
        shutdown.background, shutdown.lifecycle = hooks, lifecycle  # type: ignore[assignment]
        shutdown.begin()
        wait_for(lambda: first_termed.exists() and other_termed.exists(), 30,
                 what="TERM to both")
        assert hooks.thread.is_alive() and lifecycle.thread.is_alive()
        first_release.touch()
        other_release.touch()
        shutdown.finish()
        assert not hooks.thread.is_alive() and not lifecycle.thread.is_alive()
        assert not never.exists(), "a hook queued behind a stopped one ran"
    finally:
        first_release.touch()
        other_release.touch()


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
