"""process/rootleftovers.py: what a workspace's root session hook left running with root's
powers, found and stopped before the agent starts (invariant 11); what dropped to another
user for good is spared.

A reaper of the test's own stands in for initd's (a child subreaper: what a hook leaves
re-parents to it), with a child of its own in the supervisor's place; its hooks run as
root (the tests' user) and leave real daemons: root's, one that dropped to the agent user
the tests made, and ones that kept root's powers under it (a saved uid 0, an ambient or
an inheritable capability). The reaper is never PID 1 here, so the sweep never stops the
world."""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from initd.process import procfs
from initd.process.rootleftovers import root_leftovers, stop_root_leftovers
from tests.support.harness import wait_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="root's leftovers: runs as root")

GRACE = 0.5  # seconds a root leftover has to end on TERM before it is frozen and killed

# The reaper: a child subreaper that starts the supervisor's stand-in, then each line of
# its stdin as a root hook (sh -c, saying its pid), and reaps whatever exits under it.
REAPER = """
import ctypes, os, subprocess, sys, threading
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit("no subreaper")
me = subprocess.Popen(["sleep", "1000"], stdout=subprocess.DEVNULL)

def reap():
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            threading.Event().wait(0.05)

threading.Thread(target=reap, daemon=True).start()
print(me.pid, flush=True)
hooks = []
for line in sys.stdin:
    hooks.append(subprocess.Popen(["sh", "-c", line], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL))
    print(hooks[-1].pid, flush=True)
"""


class Reaper:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.popen = subprocess.Popen([sys.executable, "-c", REAPER], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)
        assert self.popen.stdout is not None
        self.pid = self.popen.pid
        self.me = int(self.popen.stdout.readline())

    def hook(self, script: str) -> None:
        """Run ``script`` as a root hook, to its end (what it leaves goes on)."""
        assert self.popen.stdin is not None and self.popen.stdout is not None
        self.popen.stdin.write(script.replace("\n", " ") + "\n")
        self.popen.stdin.flush()
        pid = int(self.popen.stdout.readline())
        wait_for(lambda: not alive(pid), what="the hook's end")

    def leave(self, name: str, command: str,
              ready: Callable[[int], bool] = lambda pid: procfs.command(pid).startswith(
                  "sleep")) -> int:
        """A hook that leaves ``command`` running; its pid, once ``ready`` (by default:
        it has exec'd ``sleep``, its privileges set as they will stay)."""
        pid_file = self.tmp / f"{name}.pid"
        self.hook(f"{command} & echo $! > {pid_file}")
        pid = int(pid_file.read_text())
        wait_for(lambda: ready(pid), what=f"{name} set up")
        return pid

    def descendants(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def end(self) -> None:
        for proc in self.descendants():
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        assert self.popen.stdin is not None
        self.popen.stdin.close()
        try:
            self.popen.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()


@pytest.fixture
def reaper(tmp_path: Path) -> Iterator[Reaper]:
    made = Reaper(tmp_path)
    yield made
    made.end()


def alive(pid: int) -> bool:
    fields = procfs.stat_fields(pid)
    return fields is not None and fields[0] not in (b"Z", b"X")


def dropped(user: pwd.struct_passwd, *caps: str) -> str:
    return (f"setpriv --reuid={user.pw_uid} --regid={user.pw_gid} --clear-groups "
            f"{' '.join(caps)} sleep 1000")


def saved_root(user: pwd.struct_passwd) -> str:
    """The agent's real and effective uid, and a saved uid 0: root again at will (no
    exec after: an exec would make the saved uid the effective one)."""
    return (f"{sys.executable} -c 'import os, time; os.setresgid({user.pw_gid}, "
            f"{user.pw_gid}, {user.pw_gid}); os.setgroups([]); "
            f"os.setresuid({user.pw_uid}, {user.pw_uid}, 0); time.sleep(1000)'")


def test_nothing_left_is_nothing_found(reaper: Reaper) -> None:
    reaper.hook("true")
    assert root_leftovers(reaper.pid, reaper.me) == {}
    assert stop_root_leftovers(reaper.pid, reaper.me, {}, GRACE) == {}
    assert alive(reaper.me)


def test_what_keeps_roots_powers_is_found_and_what_dropped_for_good_is_not(
        reaper: Reaper, agent_user: pwd.struct_passwd) -> None:
    root = reaper.leave("root", "sleep 1000")
    spared = reaper.leave("dropped", dropped(agent_user))
    uid = agent_user.pw_uid
    saved = reaper.leave("saved", saved_root(agent_user),
                         lambda pid: procfs.uids(pid) == (uid, uid, 0, uid))
    ambient = reaper.leave("ambient", dropped(agent_user, "--inh-caps=+net_bind_service",
                                              "--ambient-caps=+net_bind_service"))
    inheritable = reaper.leave("inheritable", dropped(agent_user,
                                                      "--inh-caps=+net_bind_service"))
    found = root_leftovers(reaper.pid, reaper.me)
    assert set(found) == {root, saved, ambient, inheritable}
    assert found == {pid: procfs.start_ticks(pid) for pid in found}  # who each one is
    assert reaper.me not in found and reaper.pid not in found  # (the supervisor, the reaper)
    assert procfs.uids(spared) == (agent_user.pw_uid,) * 4


def test_stopped_root_leftovers_are_gone_and_the_dropped_one_stays(
        reaper: Reaper, agent_user: pwd.struct_passwd) -> None:
    root = reaper.leave("root", "sleep 1000")
    deaf = reaper.leave("deaf", "sh -c \"trap '' TERM; exec sleep 1000\"")  # ignores TERM
    ambient = reaper.leave("ambient", dropped(agent_user, "--inh-caps=+net_bind_service",
                                              "--ambient-caps=+net_bind_service"))
    spared = reaper.leave("dropped", dropped(agent_user))
    seen = stop_root_leftovers(reaper.pid, reaper.me, {}, GRACE)
    assert set(seen) == {root, deaf, ambient}
    assert seen[root] == "sleep 1000"  # its command line, as first seen
    assert not any(alive(pid) for pid in (root, deaf, ambient))
    assert alive(spared) and alive(reaper.me)
    assert root_leftovers(reaper.pid, reaper.me) == {}


# A daemon that forks its way out while it is stopped: on TERM it starts its successor
# (which does the same, HOPS times in all) and exits at once.
HOPPER = """
import os, signal, subprocess, sys, time
hops = int(sys.argv[1])
def hop(*_):
    if hops > 0:
        subprocess.Popen([sys.executable, sys.argv[0], str(hops - 1), sys.argv[2]])
    os._exit(0)
signal.signal(signal.SIGTERM, hop)
with open(f"{sys.argv[2]}.{os.getpid()}", "w"):
    pass
while True:
    time.sleep(1)
"""


def test_a_daemon_that_forks_its_way_out_is_stopped_all_the_same(
        reaper: Reaper, tmp_path: Path) -> None:
    script = tmp_path / "hopper.py"
    script.write_text(HOPPER)
    marks = tmp_path / "mark"
    reaper.hook(f"{sys.executable} {script} 5 {marks} &")
    wait_for(lambda: list(tmp_path.glob("mark.*")), what="the hopper's start")
    seen = stop_root_leftovers(reaper.pid, reaper.me, {}, GRACE)
    started = {int(path.suffix[1:]) for path in tmp_path.glob("mark.*")}
    assert started <= set(seen)  # each one that got as far as its mark was seen
    assert len(seen) >= 2  # (the first hopped at its TERM: its successor was seen too)
    assert root_leftovers(reaper.pid, reaper.me) == {}
    assert [p for p in reaper.descendants() if p.pid != reaper.me
            and p.status() != psutil.STATUS_ZOMBIE] == []


def test_what_was_there_before_the_hook_is_spared(reaper: Reaper) -> None:
    """The image's hooks may leave root daemons: the sweep after a workspace's root hook
    spares what was there before it (by pid and start), and stops what is new."""
    image = reaper.leave("image", "sleep 1000")
    before = root_leftovers(reaper.pid, reaper.me)
    assert set(before) == {image}
    workspace = reaper.leave("workspace", "sleep 1000")
    seen = stop_root_leftovers(reaper.pid, reaper.me, before, GRACE)
    assert set(seen) == {workspace}
    assert alive(image) and not alive(workspace)


def test_a_spared_pid_with_another_start_is_not_spared(reaper: Reaper) -> None:
    """A pid alone names nothing: one recorded with another start is a new process."""
    daemon = reaper.leave("daemon", "sleep 1000")
    ticks = procfs.start_ticks(daemon)
    assert ticks is not None
    seen = stop_root_leftovers(reaper.pid, reaper.me, {daemon: ticks - 1}, GRACE)
    assert set(seen) == {daemon} and not alive(daemon)


def test_a_stopped_daemon_is_stopped_all_the_same(reaper: Reaper) -> None:
    """One already stopped (SIGSTOP: TERM waits for a CONT) is killed at the end."""
    daemon = reaper.leave("daemon", "sleep 1000")
    os.kill(daemon, signal.SIGSTOP)
    wait_for(lambda: (procfs.stat_fields(daemon) or [b""])[0] == b"T", what="the stop")
    assert set(stop_root_leftovers(reaper.pid, reaper.me, {}, GRACE)) == {daemon}
    assert not alive(daemon)
