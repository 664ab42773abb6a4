"""process/leftovers.py: stopping what a dead child left, by a group or session id and
/proc alone. On real process groups and sessions: TERM, the grace, KILL; and never a
signal on a guess: not to a group whose leader's pid now names another process (its
start differs), not to group 1 or below, not to another user's processes."""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from initd.process import leftovers, procfs
from tests.support.harness import wait_for

IGNORES_TERM = "trap '' TERM; exec sleep 1000"  # (an ignored signal stays so across exec)


@pytest.fixture
def procs() -> Iterator[list[int]]:
    """Pids a test started (or learnt of): KILLed at its end, whatever happened."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def asleep(pid: int) -> bool:
    """Has ``pid`` exec'd sleep (its traps set before) and is it still there?"""
    fields = procfs.stat_fields(pid)
    return fields is not None and fields[0] not in (b"Z", b"X") and \
        procfs.command(pid).startswith("sleep")


def alive(pid: int) -> bool:
    fields = procfs.stat_fields(pid)
    return fields is not None and fields[0] not in (b"Z", b"X")


def group_members(pgid: int) -> list[int]:
    return [pid for pid, (_, state) in procfs.parents().items()
            if (procfs.stat_fields(pid) or [b"", b"", b"0"])[2] == str(pgid).encode()]


# A group: its leader (a Python process, the group's own) and a member that ignores TERM.
GROUP = """
import subprocess, sys, time
member = subprocess.Popen(["sh", "-c", sys.argv[1]])
print(member.pid, flush=True)
member.wait()
time.sleep(1000)
"""


def group(procs: list[int], prefix: tuple[str, ...] = ()) -> tuple[subprocess.Popen[bytes], int]:
    """(the leader, the member), the member's trap set."""
    leader = subprocess.Popen([*prefix, sys.executable, "-c", GROUP, IGNORES_TERM],
                              stdout=subprocess.PIPE, process_group=0)
    assert leader.stdout is not None
    member = int(leader.stdout.readline())
    procs += [leader.pid, member]
    wait_for(lambda: asleep(member), what="the member's sleep")
    return leader, member


# --- a group


def test_a_group_is_termed_then_killed_and_gone(procs: list[int]) -> None:
    leader, member = group(procs)
    started = procfs.start_ticks(leader.pid)
    assert leftovers.stop_leftover_group(leader.pid, started, grace=0.2)
    assert leader.wait(timeout=30) == -signal.SIGTERM  # the leader took the TERM
    assert not alive(member)  # the member, which ignored it, the KILL
    assert group_members(leader.pid) == []


def test_a_group_that_ends_on_term_is_not_killed(procs: list[int]) -> None:
    leader = subprocess.Popen(["sleep", "1000"], process_group=0)
    procs.append(leader.pid)
    wait_for(lambda: asleep(leader.pid), what="the sleep")
    assert leftovers.stop_leftover_group(leader.pid, procfs.start_ticks(leader.pid), 30.0)
    assert leader.wait(timeout=30) == -signal.SIGTERM


def test_a_leader_whose_pid_now_names_another_process_is_never_signalled(
        procs: list[int]) -> None:
    """The start recorded is not this process's: the pid, and so the group id, was
    reused since. Nothing is signalled."""
    leader, member = group(procs)
    started = procfs.start_ticks(leader.pid)
    assert started is not None
    for recorded in (started - 1, started + 1):
        assert not leftovers.stop_leftover_group(leader.pid, recorded, grace=0.2)
    assert leader.poll() is None and alive(member)


@pytest.mark.parametrize("recorded", [None, "123", 12.0, [1]])
def test_no_recorded_start_is_no_stop(procs: list[int], recorded: object) -> None:
    leader, member = group(procs)
    assert not leftovers.stop_leftover_group(leader.pid, recorded, grace=0.2)
    assert leader.poll() is None and alive(member)


def test_a_group_that_is_gone_is_no_stop(procs: list[int]) -> None:
    leader = subprocess.Popen(["true"], process_group=0)
    started = procfs.start_ticks(leader.pid)
    leader.wait()
    assert not leftovers.stop_leftover_group(leader.pid, started, grace=0.2)


def test_another_users_group_is_never_signalled(agent_user: pwd.struct_passwd,
                                                procs: list[int]) -> None:
    leader, member = group(procs, ("setpriv", f"--reuid={agent_user.pw_uid}",
                                   f"--regid={agent_user.pw_gid}", "--clear-groups"))
    assert procfs.real_uid(leader.pid) == agent_user.pw_uid
    assert not leftovers.stop_leftover_group(leader.pid, procfs.start_ticks(leader.pid), 0.2)
    assert leader.poll() is None and alive(member)


# Group 1 is kill(-1)'s neighbour: never signalled, even with its leader's start and
# uid right. Tried as PID 1 of a PID namespace of the test's own (so that a stop that did
# go through would stop that namespace, not the host): PID 1 leads group 1 there, and
# says whether any signal reached it.
GROUP_ONE = """
import os, signal, sys
from initd.process import leftovers, procfs
os.setpgid(0, 0)  # group 1: PID 1's own
got = []
for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGHUP):
    if sig != signal.SIGKILL:
        signal.signal(sig, lambda n, f: got.append(n))
started = procfs.start_ticks(1)
said = [leftovers.stop_leftover_group(pgid, started, grace=0.2) for pgid in (1, 0, -1, -100)]
print(os.getpid(), os.getpgid(0), said, got)
"""


def test_group_1_and_below_are_never_signalled() -> None:
    out = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c",
                          GROUP_ONE], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "1 1 [False, False, False, False] []\n"


# --- a process session

# A hook service that died: its hooks, each in a group of its own, left in its session.
# A and B are root's (A ignores TERM), C dropped to another user, D left for a session of
# its own.
SESSION = """
import os, subprocess, sys
uid, gid = sys.argv[1:3]
a = subprocess.Popen(["sh", "-c", "trap '' TERM; exec sleep 1000"], process_group=0)
b = subprocess.Popen(["sleep", "1000"], process_group=0)
c = subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups",
                      "sleep", "1000"], process_group=0)
d = subprocess.Popen(["sleep", "1000"], start_new_session=True)
print(a.pid, b.pid, c.pid, d.pid, flush=True)
"""


@pytest.fixture
def session(agent_user: pwd.struct_passwd, procs: list[int]) -> tuple[int, list[int]]:
    """(the session id of a leader that has exited, [A, B, C, D])."""
    leader = subprocess.Popen([sys.executable, "-c", SESSION, str(agent_user.pw_uid),
                               str(agent_user.pw_gid)], stdout=subprocess.PIPE,
                              start_new_session=True)
    assert leader.stdout is not None
    members = [int(pid) for pid in leader.stdout.readline().split()]
    procs += members
    assert leader.wait(timeout=30) == 0
    for pid in members:
        wait_for(lambda pid=pid: asleep(pid), what=f"{pid}'s sleep")  # type: ignore[misc]
    return leader.pid, members


def test_a_session_of_the_user_given_is_stopped_and_no_more(
        session: tuple[int, list[int]], agent_user: pwd.struct_passwd) -> None:
    sid, (a, b, c, d) = session
    assert leftovers.stop_process_session(sid, os.getuid(), grace=0.2) == 2
    assert not alive(a) and not alive(b)  # A by the KILL, B by the TERM
    assert alive(c) and alive(d)  # another user's; another session's
    assert leftovers.stop_process_session(sid, agent_user.pw_uid, grace=0.2) == 1
    assert not alive(c) and alive(d)
    assert leftovers.stop_process_session(sid, None, grace=0.2) == 0  # nothing left in it
    assert alive(d)


def test_any_user_when_none_is_given(session: tuple[int, list[int]]) -> None:
    sid, (a, b, c, d) = session
    assert leftovers.stop_process_session(sid, None, grace=0.2) == 3
    assert [alive(pid) for pid in (a, b, c, d)] == [False, False, False, True]


# Session 1 and below likewise, in a PID namespace of the test's own: there PID 1 leads
# session 1 (setsid) with a child in it, and a process whose session is outside the
# namespace reads as session 0 (as kernel threads do on the host). A stop that went
# through would end these, never the host's.
SESSION_ONE = """
import os, subprocess, sys
from initd.process import leftovers, procfs
outside = subprocess.Popen(["sleep", "1000"])  # (session 0, seen from here)
os.setsid()
inside = subprocess.Popen(["sleep", "1000"])  # session 1
said = [leftovers.stop_process_session(sid, None, grace=0.2) for sid in (1, 0, -1)]
print(os.getsid(0), said, [procfs.stat_fields(p.pid)[0] not in (b"Z", b"X")
                           for p in (outside, inside)])
"""


def test_session_1_and_below_are_never_stopped() -> None:
    out = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c",
                          SESSION_ONE], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "1 [0, 0, 0] [True, True]\n"
