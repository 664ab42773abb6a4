"""supervisor/states.py: a supervised child's lifecycle. Every transition its docstring
names, taken by a real Supervised (supervised.py) over real children, driven the way the
supervisor's loop drives it: poll its waitables, then tick. Deadlines are on events."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from initd.config import log
from initd.config.values import Restart
from initd.process import spawn
from initd.supervisor.backoff import Backoff
from initd.supervisor.states import State
from initd.supervisor.supervised import Supervised

SHORT = 0.01  # seconds of backoff: restarts come at once, each delay still a BACKOFF


def leaves_a_helper(helper: str, ready: Path, code: int) -> str:
    """A leader that leaves ``helper`` (a subshell, its traps set) in its group, exits
    ``code`` once the helper is set up (a TERM before its trap would end it at once)."""
    return (f"({helper}) & while [ ! -e {ready} ]; do sleep 0.01; done; exit {code}")


class Recorded(Supervised):
    """A Supervised that notes its state at each of its own extension points."""

    def __init__(self, script: str, restart: Restart = Restart.NEVER,
                 max_restarts: int = 5, grace: float = 30.0, cwd: str = "/",
                 argv: tuple[str, ...] | None = None) -> None:
        spec = spawn.Spec(argv=argv or ("sh", "-c", script), env=dict(os.environ), cwd=cwd)
        super().__init__("test", spec, restart, Backoff(max_restarts, 600.0, base=SHORT),
                         grace, log.get())
        self.at_spawn: list[State] = []
        self.at_end: list[State] = []

    def spawned(self, child: spawn.Child) -> None:
        self.at_spawn.append(self.state)

    def ended(self, child: spawn.Child, deadline: float) -> None:
        self.at_end.append(self.state)


class Announced(Recorded):
    announces_ready = True  # as the hook service: ready when it says so


def drive(child: Supervised, until: Callable[[], bool], what: str,
          timeout: float = 30) -> list[State]:
    """The supervisor's loop for one child until ``until()``; the states it went through."""
    seen = [child.state]
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}: states {seen}")
        wait = child.timeout()
        spawn.wait_fds(child.waitables(), 0.05 if wait is None else min(wait, 0.05))
        child.tick()
        if child.state is not seen[-1]:
            seen.append(child.state)
    return seen


@pytest.fixture
def stopped() -> Iterator[list[Supervised]]:
    """Children a test started: stopped at its end, whatever its assertions did."""
    made: list[Supervised] = []
    yield made
    for child in made:
        child.stop(signal.SIGKILL, grace=0)


def test_final_and_alive_name_the_states_they_say() -> None:
    assert {s for s in State if s.final} == {State.EXITED, State.FATAL}
    assert {s for s in State if s.alive} == {State.STARTING, State.RUNNING, State.STOPPING}


def test_stopped_start_running_at_once_without_a_readiness_check(
        stopped: list[Supervised]) -> None:
    child = Recorded("exec sleep 1000")
    stopped.append(child)
    assert child.state is State.STOPPED
    child.start()
    assert child.at_spawn == [State.STARTING]  # spawned as STARTING, ready at once
    assert child.state is State.RUNNING and child.describe()["ready"]


def test_starting_then_running_once_it_says_it_is_ready(stopped: list[Supervised]) -> None:
    child = Announced("exec sleep 1000")
    stopped.append(child)
    child.start()
    assert child.state is State.STARTING
    assert not child.describe()["ready"]
    child.tick()  # nothing has said so
    assert child.state is State.STARTING
    child.mark_ready()
    assert child.state is State.RUNNING
    child.mark_ready()  # (again: nothing changes)
    assert child.state is State.RUNNING


@pytest.mark.parametrize(("argv", "code"), [(("/nonexistent/agent",), 127),
                                            (("/etc/passwd",), 126)])
def test_an_exec_failure_goes_straight_to_an_exit(argv: tuple[str, ...], code: int) -> None:
    child = Recorded("", argv=argv)
    child.start()
    assert (child.state, child.last_code, child.child) == (State.EXITED, code, None)
    assert child.at_spawn == []  # never STARTING


def test_no_working_directory_is_initds_own_failure(tmp_path: Path) -> None:
    child = Recorded("exit 0", cwd=str(tmp_path / "gone"))
    child.start()
    assert (child.state, child.last_code) == (State.EXITED, 125)


def test_an_exec_failure_with_a_restart_policy_backs_off(stopped: list[Supervised]) -> None:
    child = Recorded("", argv=("/nonexistent/agent",), restart=Restart.ON_FAILURE,
                     max_restarts=2)
    stopped.append(child)
    child.start()
    assert child.state is State.BACKOFF
    seen = drive(child, lambda: child.state.final, "the crash loop's end")
    assert seen[-1] is State.FATAL and child.last_code == 127 and child.starts == 3


def test_an_exit_with_nothing_left_is_an_exit_at_once() -> None:
    child = Recorded("exit 3")
    child.start()
    seen = drive(child, lambda: child.state.final, "the exit")
    assert seen == [State.RUNNING, State.EXITED]  # (STOPPING within one tick)
    assert child.at_end == [State.STOPPING]
    assert child.last_code == 3


def test_an_exit_that_left_its_group_is_stopping_until_that_is_stopped(
        tmp_path: Path, stopped: list[Supervised]) -> None:
    """STARTING/RUNNING --exit--> STOPPING while a worker stops what the leader left
    (here a helper that ignores TERM and ends when told), then EXITED."""
    go, ready = tmp_path / "go", tmp_path / "ready"
    child = Recorded(leaves_a_helper(
        f"trap '' TERM; touch {ready}; while [ ! -e {go} ]; do sleep 0.02; done", ready, 4))
    stopped.append(child)
    child.start()
    drive(child, lambda: child.state is State.STOPPING, "the leader's exit")
    assert child.child is None and child.leftovers is not None
    for _ in range(20):  # the helper is there, being stopped: no tick ends this
        spawn.wait_fds(child.waitables(), 0.01)
        child.tick()
        assert child.state is State.STOPPING
    go.touch()
    seen = drive(child, lambda: child.state.final, "the helper's end")
    assert seen == [State.STOPPING, State.EXITED] and child.last_code == 4
    assert child.leftovers is None


def test_a_signal_passed_on_while_stopping_reaches_what_the_leader_left(
        tmp_path: Path, stopped: list[Supervised]) -> None:
    ready = tmp_path / "ready"
    child = Recorded(leaves_a_helper(
        f"trap '' TERM; touch {ready}; while :; do sleep 0.02; done", ready, 4))
    stopped.append(child)
    child.start()
    drive(child, lambda: child.state is State.STOPPING, "the leader's exit")
    child.forward(signal.SIGUSR1)  # (at its default: it ends the helper)
    assert drive(child, lambda: child.state.final, "the helper's end")[-1] is State.EXITED


@pytest.mark.parametrize(("restart", "code", "final"), [
    (Restart.NEVER, 1, State.EXITED),
    (Restart.ON_FAILURE, 0, State.EXITED),
    (Restart.ON_FAILURE, 1, State.BACKOFF),
    (Restart.ALWAYS, 0, State.BACKOFF),
])
def test_done_is_backoff_or_exited_by_the_policy(restart: Restart, code: int, final: State,
                                                 stopped: list[Supervised]) -> None:
    child = Recorded(f"exit {code}", restart=restart)
    stopped.append(child)
    child.start()
    child.restart_at = float("inf")  # (a backoff is then seen, never ended, by the tick)
    seen = drive(child, lambda: child.state in (State.EXITED, State.BACKOFF), "the exit")
    assert seen[-1] is final and child.last_code == code


def test_backoff_when_due_starts_again(tmp_path: Path, stopped: list[Supervised]) -> None:
    runs = tmp_path / "runs"
    child = Recorded(f"echo x >> {runs}; [ $(wc -l < {runs}) -ge 3 ] && exec sleep 1000; "
                     "exit 2", restart=Restart.ON_FAILURE)
    stopped.append(child)
    child.start()
    seen = drive(child, lambda: child.starts == 3 and child.state is State.RUNNING,
                 "the third start")
    assert seen == [State.RUNNING, State.BACKOFF, State.RUNNING, State.BACKOFF,
                    State.RUNNING]
    assert child.at_spawn == [State.STARTING] * 3
    assert child.describe()["restarts"] == 2 and child.last_code == 2


def test_too_many_restarts_in_the_window_is_fatal_with_the_last_code(
        stopped: list[Supervised]) -> None:
    child = Recorded("exit 7", restart=Restart.ALWAYS, max_restarts=2)
    stopped.append(child)
    child.start()
    seen = drive(child, lambda: child.state.final, "the crash loop's end")
    assert seen[-1] is State.FATAL and State.BACKOFF in seen
    assert (child.starts, child.last_code) == (3, 7)
    assert child.state.final and not child.state.alive


@pytest.mark.parametrize("ready", [False, True], ids=["starting", "running"])
def test_stop_is_stopping_then_exited(ready: bool) -> None:
    child = Announced("exec sleep 1000")
    child.start()
    if ready:
        child.mark_ready()
    assert child.stop(signal.SIGTERM) == 128 + signal.SIGTERM
    assert child.at_end == [State.STOPPING]
    assert (child.state, child.child) == (State.EXITED, None)


def test_stop_in_backoff_is_exited_with_the_last_code() -> None:
    child = Recorded("exit 6", restart=Restart.ON_FAILURE)
    child.start()
    child.restart_at = float("inf")
    drive(child, lambda: child.state is State.BACKOFF, "the backoff")
    assert child.stop(signal.SIGTERM) == 6
    assert child.state is State.EXITED


def test_stop_while_stopping_waits_for_what_the_leader_left(tmp_path: Path) -> None:
    """The stop came while a worker stopped what the last leader left: it is given the
    stop signal too, waited for in the same grace, and the code is the leader's."""
    ready = tmp_path / "ready"
    child = Recorded(leaves_a_helper(
        f"trap '' TERM; trap 'exit 0' USR1; touch {ready}; while :; do sleep 0.02; done",
        ready, 5))
    child.start()
    drive(child, lambda: child.state is State.STOPPING, "the leader's exit")
    assert child.stop(signal.SIGUSR1) == 5
    assert (child.state, child.leftovers) == (State.EXITED, None)
