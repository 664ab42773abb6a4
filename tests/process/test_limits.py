"""Per-hook limits (initd/process/limits.py): real processes started by spawn.spawn with limits,
each limit made to bite, the starter (this process, as initd would be) unaffected."""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
from pathlib import Path

import pytest

from initd.pid1 import signals as pid1signals
from initd.process import limits, spawn, users
from initd.process.limits import LimitError, Limits

PY = "/usr/bin/python3"


def run(argv: list[str], lim: Limits, account: users.Account | None = None,
        timeout: float = 30) -> tuple[int, str]:
    """(returncode as Popen gives it, output) of ``argv`` started with ``lim``."""
    child = spawn.spawn(spawn.Spec(argv=tuple(argv), env=dict(os.environ), cwd="/",
                                 account=account, stdout=spawn.PIPE, stderr=spawn.STDOUT,
                                 limits=lim))
    assert child.popen.stdout is not None
    try:
        code = child.wait(timeout)  # (its few lines fit the pipe: read once it has ended)
        assert code is not None, f"{argv} still runs after {timeout} s"
        out = child.popen.stdout.read()
    finally:
        spawn.stop(child, signal.SIGKILL, 0.1)
        child.popen.stdout.close()
    return code, out.decode(errors="replace")


@pytest.mark.slow
def test_a_hook_spinning_past_its_cpu_limit_is_killed_and_said_so() -> None:
    # (a spin the limit never stopped would run past run()'s deadline)
    code, _ = run(["sh", "-c", "while :; do :; done"], Limits(cpu=1))
    assert code == -signal.SIGXCPU
    assert limits.killed_by(code, Limits(cpu=1)) == "its cpu limit (1 s of CPU)"
    assert limits.killed_by(code, limits.NONE) is None  # not a limit of ours


def test_a_file_past_its_file_size_limit_stops_there(tmp_path: Path) -> None:
    target = tmp_path / "big"
    code, _ = run(["sh", "-c", f"head -c 3000000 /dev/zero > {target}"],
                  Limits(file_size=2**20))
    assert code == 128 + signal.SIGXFSZ  # head died of it; sh says so
    assert target.stat().st_size == 2**20
    assert limits.killed_by(code, Limits(file_size=2**20)) == "its file_size limit (1 MiB)"
    assert limits.killed_by(-signal.SIGXFSZ, Limits(file_size=2**20)) is not None


@pytest.mark.slow
def test_an_allocation_past_the_memory_limit_fails_in_the_hook_not_in_initd() -> None:
    grab = [PY, "-c", "bytearray(400 * 2**20); print('allocated')"]
    code, out = run(grab, Limits(memory=200 * 2**20))
    assert code == 1 and "MemoryError" in out
    assert run(grab, limits.NONE) == (0, "allocated\n")  # the same, unlimited
    bytearray(400 * 2**20)  # and this process, which started it, is as it was


@pytest.mark.skipif(os.geteuid() != 0, reason="a limit on another user's processes "
                    "needs root to start that user's hook")
def test_a_fork_bomb_past_its_processes_limit_gets_eagain(agent_user: pwd.struct_passwd
                                                         ) -> None:
    """RLIMIT_NPROC counts the user's processes: the hook's user here owns nothing else,
    so a limit of 20 lets the hook start about 20 and no more."""
    account = users.lookup(agent_user.pw_name)
    bomb = ("import os, signal, time\n"
            "kids, failed = [], 0\n"
            "for _ in range(100):\n"
            "    try:\n"
            "        pid = os.fork()\n"
            "    except BlockingIOError:\n"
            "        failed += 1\n"
            "        continue\n"
            "    if pid == 0:\n"
            "        time.sleep(30)\n"
            "        os._exit(0)\n"
            "    kids.append(pid)\n"
            "for pid in kids:\n"
            "    os.kill(pid, signal.SIGKILL)\n"
            "    os.waitpid(pid, 0)\n"
            "print(len(kids), failed)\n")
    code, out = run([PY, "-c", bomb], Limits(processes=20), account)
    started, failed = map(int, out.split())
    assert code == 0 and started < 20 and failed == 100 - started, out
    # this process (root, as initd is) still forks as it likes
    assert subprocess.run(["true"]).returncode == 0


def test_a_limited_hook_starts_with_clean_signals_and_gets_its_arguments() -> None:
    # From a parent as clean as initd's supervisor makes itself: under `make test`, make's
    # posix_spawn leaves this pytest with signal 32 ignored (pid1signals says why), and a
    # pytest a shell started with `&` has INT and QUIT ignored (POSIX, without job control)
    pid1signals._default_glibc_reserved()
    was = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGQUIT)}
    signal.signal(signal.SIGINT, signal.default_int_handler)  # (a handler: default in a child)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)
    try:
        code, out = run(["sh", "-c", 'grep -E "^Sig(Blk|Ign)" /proc/self/status; echo "[$1]"',
                         "sh", "one arg"], Limits(cpu=60))
    finally:
        for sig, handler in was.items():
            signal.signal(sig, handler)
    assert code == 0
    assert out.split() == ["SigBlk:", "0" * 16, "SigIgn:", "0" * 16, "[one", "arg]"]


def test_a_limited_hook_that_cannot_run_says_why_as_exec_does() -> None:
    assert run(["/no/such/hook"], Limits(cpu=5)) == (
        127, "/no/such/hook: No such file or directory\n")


def test_without_limits_nothing_is_in_between() -> None:
    assert limits.wrap(("a", "b"), limits.NONE) == ("a", "b")
    wrapped = limits.wrap(("a",), Limits(cpu=3, memory=5))
    assert wrapped[-3:] == ("RLIMIT_AS=5:5", "--", "a")
    assert "RLIMIT_CPU=3:4" in wrapped  # SIGXCPU at 3 s, SIGKILL at 4


@pytest.mark.parametrize(("written", "parsed"), [
    ({"cpu": 10}, Limits(cpu=10)),
    ({"memory": "512M", "file_size": "1 GiB"}, Limits(memory=2**29, file_size=2**30)),
    ({"memory": 1000, "processes": 50}, Limits(memory=1000, processes=50)),
    (None, limits.NONE),
])
def test_limits_as_written(written: object, parsed: Limits) -> None:
    assert limits.parse(written) == parsed


@pytest.mark.parametrize(("written", "error"), [
    ("lots", "limits: expected a mapping of cpu, memory, processes, file_size, got str"),
    ({"ram": 5}, "limits: unknown ram (known: cpu, memory, processes, file_size)"),
    ({"cpu": "10s"}, "limits: cpu: expected a whole number > 0, got '10s'"),
    ({"cpu": 0}, "limits: cpu: expected a whole number > 0, got 0"),
    ({"cpu": True}, "limits: cpu: expected a whole number > 0, got None"),
    ({"cpu": 10**30}, f"limits: cpu: at most {2**62}, got {str(10**30)[:40]}"),
    ({"memory": "9" * 25 + "T"}, f"limits: memory: at most {2**62}, got {'9' * 25}T"),
    ({"memory": "9" * 500}, "limits: memory: expected bytes > 0, or a number with K, M, G "
                            f"or T, got '{'9' * 500}'"[:200]),
    ({"memory": "lots"}, "limits: memory: expected bytes > 0, or a number with K, M, G or "
                         "T, got 'lots'"),
])
def test_bad_limits_are_named(written: object, error: str) -> None:
    with pytest.raises(LimitError) as err:
        limits.parse(written)
    assert str(err.value) == error


def test_defaults_fill_what_a_hook_leaves_out() -> None:
    assert Limits(cpu=5).over(Limits(cpu=60, memory=100)) == Limits(cpu=5, memory=100)
    assert Limits(cpu=5, memory=2**30).describe() == "cpu 5 s, memory 1 GiB"
