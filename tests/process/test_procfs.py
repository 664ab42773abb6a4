"""process/procfs.py: processes as /proc shows them, read from real processes. A command
name made to fool a parser, processes gone or exiting while they are read, zombies, uids
and capabilities of a user the tests made, and the descriptor limit, where "cannot look"
must never read as "gone"."""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.process import procfs
from tests.support.harness import wait_for


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test started, killed and reaped at its end."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for popen in started:
        if popen.poll() is None:
            popen.kill()
        popen.wait()


def start(procs: list[subprocess.Popen[bytes]], *argv: str,
          **kw: object) -> subprocess.Popen[bytes]:
    popen = subprocess.Popen(argv, **kw)  # type: ignore[call-overload]
    procs.append(popen)
    return popen  # type: ignore[no-any-return]


def running(pid: int, comm: str) -> bool:
    """Has ``pid`` exec'd ``comm`` and is it waiting (its set-up done)?"""
    try:
        with open(f"/proc/{pid}/comm") as f:
            named = f.read().rstrip("\n") == comm
        with open(f"/proc/{pid}/wchan") as f:
            return named and f.read() not in ("", "0")
    except OSError:
        return False


def gone_pid(procs: list[subprocess.Popen[bytes]]) -> int:
    """The pid of a process that has exited and been reaped."""
    popen = start(procs, "true")
    popen.wait()
    return popen.pid


# --- stat


def test_a_command_name_with_spaces_and_parentheses_is_read_after_the_last_one(
        tmp_path: Path, procs: list[subprocess.Popen[bytes]]) -> None:
    """The kernel puts the name between parentheses as it is: a script run through a
    link named ``a) Z 1 (b`` would read as a zombie whose parent is 1 to a parser that
    split at the first ``)``."""
    script = tmp_path / "script"
    script.write_text("#!/bin/sh\nread line\n")
    script.chmod(0o755)
    name = "a) Z 1 (b"
    (tmp_path / name).symlink_to(script)
    popen = start(procs, str(tmp_path / name), stdin=subprocess.PIPE, process_group=0)
    wait_for(lambda: running(popen.pid, name), what="the script reading")
    fields = procfs.stat_fields(popen.pid)
    assert fields is not None
    state, ppid, pgrp, session = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    assert (state, ppid, pgrp, session) == (b"S", os.getpid(), popen.pid, os.getsid(0))
    assert [pgrp for s, pgrp in procfs.proc_groups() if pgrp == popen.pid] == [popen.pid]
    assert procfs.parents()[popen.pid] == (os.getpid(), "S")
    assert procfs.command(popen.pid) == f"/bin/sh {tmp_path / name}"
    ticks = procfs.start_ticks(popen.pid)
    assert ticks is not None and ticks == procfs.start_ticks(popen.pid)  # (who it is)
    mine = procfs.start_ticks(os.getpid())
    assert mine is not None and mine <= ticks  # started before it


def test_a_zombie_is_state_z_and_not_a_live_process(procs: list[subprocess.Popen[bytes]]) -> None:
    popen = start(procs, "sh", "-c", "exit 3", process_group=0)
    wait_for(lambda: (procfs.stat_fields(popen.pid) or [b""])[0] == b"Z", what="a zombie")
    assert ("Z", popen.pid) in procfs.proc_groups()
    assert popen.pid not in procfs.parents()  # (the living only)
    assert procfs.start_ticks(popen.pid) is not None  # still that process, until reaped
    assert procfs.uids(popen.pid) == (os.getuid(),) * 4
    assert procfs.children(popen.pid) == []
    assert procfs.command(popen.pid) == ""  # (a zombie's memory is gone: no cmdline)
    assert popen.wait() == 3


def test_a_process_that_is_gone_is_none_of_everything(
        procs: list[subprocess.Popen[bytes]]) -> None:
    pid = gone_pid(procs)
    assert procfs.stat_fields(pid) is None and procfs.stat_fields(pid, strict=True) is None
    assert procfs.start_ticks(pid) is None
    assert procfs.uids(pid) == () and procfs.real_uid(pid) is None
    assert procfs.command(pid) == ""
    assert procfs.children(pid) == []
    assert not procfs.privileged(pid)
    assert not procfs.signal_if(pid, lambda: True, signal.SIGTERM)


def test_a_pid_no_process_has() -> None:
    assert procfs.stat_fields(2**22 + 1) is None and procfs.uids(2**22 + 1) == ()


# --- a process that exits while it is read


@pytest.mark.slow
def test_reading_while_processes_come_and_go_never_raises(
        procs: list[subprocess.Popen[bytes]]) -> None:
    """Between the listing of /proc (or of a process's tasks) and the read of each entry,
    a process or a thread may exit: that entry is simply not there. Two hundred rounds
    against a process whose threads each start a child and end, beside a shell that
    starts a process after another."""
    churn = start(procs, sys.executable, "-c", """
import subprocess, threading
def one():
    subprocess.run(["true"])
while True:
    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
""")
    shell = start(procs, "sh", "-c", "while :; do /bin/true; done")
    seen_children = 0
    for _ in range(200):
        found = procfs.children(churn.pid)
        seen_children += len(found)
        assert all(isinstance(pid, int) and pid > 0 for pid in found)
        table = procfs.parents()
        assert table[shell.pid][0] == os.getpid()
        assert all(state not in "ZX" for _, state in table.values())
        assert all(isinstance(pgrp, int) for _, pgrp in procfs.proc_groups())
        for pid in procfs.children(shell.pid):  # each there, or gone, as it is read
            fields = procfs.stat_fields(pid, strict=True)
            assert fields is None or fields[0] in (b"R", b"S", b"D", b"Z", b"X")  # (X: dying)
            ticks = procfs.start_ticks(pid)
            assert ticks is None or ticks > 0
            assert procfs.uids(pid, strict=True) in ((), (os.getuid(),) * 4)
            assert procfs.privileged(pid) in (False, os.getuid() == 0)
            assert isinstance(procfs.command(pid), str)
    assert seen_children > 0  # (the threads' children were seen: the race was there)


def test_signal_if_never_hits_a_process_that_left_while_it_was_checked(
        procs: list[subprocess.Popen[bytes]]) -> None:
    """The pidfd is opened first, then ``still()`` asked: a process that exits (and is
    reaped: its pid free for reuse) in between is not signalled, whatever takes its pid."""
    popen = start(procs, "sleep", "1000")

    def gone_meanwhile() -> bool:
        popen.kill()
        popen.wait()
        return True  # (still "that process", as a check done a moment before would say)

    assert not procfs.signal_if(popen.pid, gone_meanwhile, signal.SIGTERM)


def test_signal_if_signals_only_while_still_holds(
        procs: list[subprocess.Popen[bytes]]) -> None:
    popen = start(procs, "sleep", "1000")
    assert not procfs.signal_if(popen.pid, lambda: False, signal.SIGTERM)
    assert popen.poll() is None
    assert procfs.signal_if(popen.pid, lambda: True, signal.SIGTERM)
    assert popen.wait(timeout=30) == -signal.SIGTERM


# --- children


def test_children_of_every_thread(procs: list[subprocess.Popen[bytes]]) -> None:
    """A child started by a thread is listed in that thread's own children file."""
    if not procfs.children_listed():
        pytest.skip("cannot run here: this kernel lists no task's children "
                    "(CONFIG_PROC_CHILDREN)")
    parent = start(procs, sys.executable, "-c", """
import subprocess, sys, threading
kids = []
def spawn():
    kids.append(subprocess.Popen(["sleep", "1000"]))
t = threading.Thread(target=spawn); t.start(); t.join()
main = subprocess.Popen(["sleep", "1000"])
print(kids[0].pid, main.pid, flush=True)
threading.Event().wait()
""", stdout=subprocess.PIPE)
    assert parent.stdout is not None
    from_thread, from_main = (int(n) for n in parent.stdout.readline().split())
    assert sorted(procfs.children(parent.pid)) == sorted([from_thread, from_main])
    assert procfs.children(from_main) == []
    for pid in (from_thread, from_main):
        os.kill(pid, signal.SIGKILL)


# --- uids and capabilities, of a user the tests made


def test_a_process_as_another_user(agent_user: pwd.struct_passwd,
                                   procs: list[subprocess.Popen[bytes]]) -> None:
    uid = agent_user.pw_uid
    popen = start(procs, "setpriv", f"--reuid={uid}", f"--regid={agent_user.pw_gid}",
                  "--clear-groups", "sleep", "1000")
    wait_for(lambda: running(popen.pid, "sleep"), what="the sleep as the agent")
    assert procfs.uids(popen.pid) == (uid,) * 4
    assert procfs.real_uid(popen.pid) == uid
    assert not procfs.privileged(popen.pid)  # dropped for good


def test_uid_0_in_any_of_the_four_is_privileged(agent_user: pwd.struct_passwd,
                                                procs: list[subprocess.Popen[bytes]]) -> None:
    """Real and effective the agent's, saved 0: it can become root again."""
    uid = agent_user.pw_uid
    popen = start(procs, sys.executable, "-c",
                  f"import os, time; os.setresgid({agent_user.pw_gid}, {agent_user.pw_gid}, "
                  f"{agent_user.pw_gid}); os.setgroups([]); os.setresuid({uid}, {uid}, 0); "
                  "print(flush=True); time.sleep(1000)", stdout=subprocess.PIPE)
    assert popen.stdout is not None and popen.stdout.readline() == b"\n"
    assert procfs.uids(popen.pid) == (uid, uid, 0, uid)
    assert procfs.real_uid(popen.pid) == uid
    assert procfs.privileged(popen.pid)


@pytest.mark.parametrize("caps", [
    ("--inh-caps=+net_bind_service", "--ambient-caps=+net_bind_service"),
    ("--inh-caps=+net_bind_service",),
], ids=["ambient", "inheritable"])
def test_a_capability_under_another_uid_is_privileged(
        agent_user: pwd.struct_passwd, caps: tuple[str, ...],
        procs: list[subprocess.Popen[bytes]]) -> None:
    uid = agent_user.pw_uid
    popen = start(procs, "setpriv", f"--reuid={uid}", f"--regid={agent_user.pw_gid}",
                  "--clear-groups", *caps, "sleep", "1000")
    wait_for(lambda: running(popen.pid, "sleep"), what="the sleep as the agent")
    assert procfs.uids(popen.pid) == (uid,) * 4
    assert procfs.privileged(popen.pid)


def test_root_is_privileged(procs: list[subprocess.Popen[bytes]]) -> None:
    if os.geteuid() != 0:
        pytest.skip("runs as root")  # (strictskips: never skipped as root)
    popen = start(procs, "sleep", "1000")
    wait_for(lambda: running(popen.pid, "sleep"), what="the sleep")
    assert procfs.privileged(popen.pid) and procfs.uids(popen.pid) == (0, 0, 0, 0)


# --- command


def test_command_is_the_command_line_with_spaces_cut_at_the_limit(
        procs: list[subprocess.Popen[bytes]]) -> None:
    popen = start(procs, sys.executable, "-c", "import time; time.sleep(1000)", "two words",
                  "\udcff", "x" * 500)  # (an argument that is not UTF-8)
    wait_for(lambda: procfs.command(popen.pid).endswith("x"), what="the exec")
    said = procfs.command(popen.pid)
    assert said.startswith(f"{sys.executable} -c import time; time.sleep(1000) two words \ufffd x")
    assert len(said) == 200
    assert len(procfs.command(popen.pid, limit=10)) == 10


# --- at the descriptor limit

AT_THE_LIMIT = """
import errno, json, os, resource, signal, sys
from initd.process import procfs
pid = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
held = []
try:
    while True:
        held.append(os.open("/dev/null", os.O_RDONLY))
except OSError as err:
    assert err.errno == errno.EMFILE
said = {}
for name, call in [
        ("stat", lambda: procfs.stat_fields(pid)),
        ("stat_strict", lambda: procfs.stat_fields(pid, strict=True)),
        ("uids", lambda: procfs.uids(pid)),
        ("uids_strict", lambda: procfs.uids(pid, strict=True)),
        ("children", lambda: procfs.children(pid)),
        ("parents", lambda: procfs.parents()),
        ("privileged", lambda: procfs.privileged(pid)),
        ("signal_if", lambda: procfs.signal_if(pid, lambda: True, signal.SIGTERM))]:
    try:
        said[name] = repr(call())
    except OSError as err:
        said[name] = errno.errorcode[err.errno]
print(json.dumps(said))
"""


def test_at_the_descriptor_limit_a_strict_read_raises_and_a_signal_still_goes(
        procs: list[subprocess.Popen[bytes]]) -> None:
    """A plain read reads as "gone" there (its callers can live with that); a strict one
    raises, so the sweep of root's leftovers waits for a descriptor instead of finding
    nothing. signal_if, with no descriptor for a pidfd, signals by pid."""
    target = start(procs, "sleep", "1000")
    out = subprocess.run([sys.executable, "-c", AT_THE_LIMIT, str(target.pid)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "stat": "None", "stat_strict": "EMFILE", "uids": "()", "uids_strict": "EMFILE",
        "children": "EMFILE", "parents": "EMFILE", "privileged": "EMFILE",
        "signal_if": "True"}
    assert target.wait(timeout=30) == -signal.SIGTERM



def test_usage_is_cpu_seconds_and_resident_bytes_as_psutil_reads_them(
        procs: list[subprocess.Popen[bytes]]) -> None:
    import psutil

    burner = subprocess.Popen([sys.executable, "-c", "b = bytearray(64 << 20)\n"
                               "import time; t = time.process_time()\n"
                               "while time.process_time() - t < 0.3: pass\n"
                               "print(flush=True); time.sleep(100)"],
                              stdout=subprocess.PIPE)
    procs.append(burner)
    assert burner.stdout is not None and burner.stdout.readline() == b"\n"
    used = procfs.usage(burner.pid)
    assert used is not None
    cpu, resident = used
    times, memory = psutil.Process(burner.pid).cpu_times(), psutil.Process(burner.pid).memory_info()
    assert 0.25 <= cpu <= times.user + times.system + 0.02
    assert resident >= 64 << 20 and abs(resident - memory.rss) < 4 << 20
    burner.kill()
    burner.wait()
    assert procfs.usage(burner.pid) is None  # gone
