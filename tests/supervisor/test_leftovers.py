"""supervisor/leftovers.py: the Leftovers class. What an exited leader left in its group,
stopped by a worker (TERM, the grace, KILL) while the supervisor's loop goes on; its pipe
wakes the loop's poll when that is done, and without a descriptor to make one, the loop
is told to look again soon. Real groups, real helpers; deadlines on events only."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.config import log
from initd.process import procfs, spawn
from initd.supervisor.leftovers import POLL, Leftovers


@pytest.fixture
def children() -> Iterator[list[spawn.Child]]:
    made: list[spawn.Child] = []
    yield made
    for child in made:
        child.signal_group(signal.SIGKILL)


def leader(children: list[spawn.Child], script: str) -> tuple[spawn.Child, int]:
    """A leader that runs ``script`` in its group and exits; (it, its returncode)."""
    child = spawn.spawn(spawn.Spec(argv=("sh", "-c", script), env={"PATH": "/usr/bin:/bin"},
                                   cwd="/"))
    children.append(child)
    code = child.wait(60)
    assert code is not None
    return child, code


def leaves(helper: str, ready: Path, code: int) -> str:
    """``helper`` left in the group (its traps set before the leader exits ``code``)."""
    return f"({helper}) & while [ ! -e {ready} ]; do sleep 0.01; done; exit {code}"


def workers(child: spawn.Child) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"leftovers-{child.pid}"]


def test_nothing_left_is_done_at_once_with_no_worker(children: list[spawn.Child]) -> None:
    child, code = leader(children, "exit 3")
    left = Leftovers(child, code, 30.0, log.get())
    assert left.done.is_set() and left.code == 3
    assert (left.waitables(), left.timeout(), workers(child)) == ([], None, [])
    left.close()


def test_a_killed_leader_is_128_plus_its_signal(children: list[spawn.Child]) -> None:
    child, code = leader(children, "kill -KILL $$")
    assert Leftovers(child, code, 30.0, log.get()).code == 128 + signal.SIGKILL


def test_what_was_left_is_stopped_off_the_loop_and_its_end_wakes_the_poll(
        children: list[spawn.Child], tmp_path: Path) -> None:
    """The helper ignores TERM and ends when told: until then the worker waits (the
    grace is long), and the constructor has already returned; once it ends, the pipe
    turns readable and ``done`` is set."""
    ready, go = tmp_path / "ready", tmp_path / "go"
    child, code = leader(children, leaves(
        f"trap '' TERM; touch {ready}; while [ ! -e {go} ]; do sleep 0.02; done", ready, 4))
    left = Leftovers(child, code, 600.0, log.get())
    assert not left.done.is_set() and left.code == 4
    assert left.waitables() == [left] and left.timeout() is None
    assert len(workers(child)) == 1
    assert spawn.wait_fds(left.waitables(), 0.2) == set()  # (nothing to wake for yet)
    assert child.group_alive()
    go.touch()
    assert spawn.wait_fds(left.waitables(), 60) == {left.fileno()}
    assert left.done.wait(60) and not child.group_alive()
    left.close()
    assert left.waitables() == [] and left.fileno() == -1
    left.close()  # (again: nothing)


def test_a_helper_that_ignores_term_is_killed_after_the_grace(
        children: list[spawn.Child], tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    child, code = leader(children, leaves(
        f"trap '' TERM; touch {ready}; while :; do sleep 0.02; done", ready, 0))
    left = Leftovers(child, code, 0.2, log.get())
    assert spawn.wait_fds(left.waitables(), 60) == {left.fileno()}
    assert left.done.is_set() and not child.group_alive()
    assert left.code == 0
    left.close()


# At the descriptor limit there is no pipe: the loop is told to look every POLL s.
NO_DESCRIPTOR = """
import json, os, resource, sys
from initd.config import log
from initd.process import spawn
from initd.supervisor.leftovers import Leftovers
ready, go = sys.argv[1:3]
child = spawn.spawn(spawn.Spec(argv=("sh", "-c",
    f"(trap '' TERM; touch {ready}; while [ ! -e {go} ]; do sleep 0.02; done) & "
    f"while [ ! -e {ready} ]; do sleep 0.01; done; exit 5"), env={"PATH": "/usr/bin:/bin"},
    cwd="/", stdout=spawn.DEVNULL, stderr=spawn.DEVNULL))
code = child.wait(60)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")), hard))
held = []
try:
    while True:
        held.append(os.open("/dev/null", os.O_RDONLY))
except OSError:
    pass
left = Leftovers(child, code, 600.0, log.get())
said = [left.waitables() == [], left.timeout(), left.done.is_set()]
for fd in held:  # (the worker reads /proc, and the helper is told to end)
    os.close(fd)
open(go, "w").close()
left.done.wait(60)
print(json.dumps(said + [left.timeout(), left.done.is_set(), left.code]))
"""


def test_without_a_descriptor_the_loop_looks_again_every_poll(tmp_path: Path) -> None:
    ready, go = tmp_path / "ready", tmp_path / "go"
    out = subprocess.run([sys.executable, "-c", NO_DESCRIPTOR, str(ready), str(go)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [True, POLL, False, None, True, 5]


def test_the_helper_was_a_member_of_the_group_and_is_gone(
        children: list[spawn.Child], tmp_path: Path) -> None:
    """What was stopped is the group's, and all of it."""
    ready = tmp_path / "ready"
    child, code = leader(children, leaves(
        f"trap '' TERM; sleep 1000 & sleep 1000 & touch {ready}; wait", ready, 0))
    members = [pid for pid, (_, state) in procfs.parents().items()
               if (procfs.stat_fields(pid) or [b"", b"", b"0"])[2] == str(child.pgid).encode()]
    assert len(members) >= 3  # the helper and its two sleeps
    left = Leftovers(child, code, 0.2, log.get())
    assert left.done.wait(60)
    assert not any((procfs.stat_fields(pid) or [b"Z"])[0] not in (b"Z", b"X")
                   for pid in members)
    left.close()
