"""hooks.runner: one hook run on real processes, pipes and files.

The contract under test: ``run`` never raises for anything the hook does; the hook gets its
own process group, and at a timeout or on cancel the whole group is stopped; the log keeps
stdout and stderr in arrival order and is capped with a marker; memory keeps only a head
and a tail; ``run`` never waits on a pipe a leftover daemon holds open.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from initd.hooks.status.store import StatusStore
from initd.process import output, runner

NOBODY = 65534


# --- helpers -------------------------------------------------------------------------------


def hook(tmp_path: Path, body: str, name: str = "hook") -> str:
    """Write an executable ``#!/bin/sh`` hook into tmp_path and return its path."""
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def run(tmp_path: Path, path: str, **kw: Any) -> runner.Result:
    log_path = kw.pop("log_path", str(tmp_path / "hook.log"))
    args: dict[str, Any] = {"env": os.environ, "cwd": str(tmp_path), "account": None,
                            "timeout": 10.0, "log": open(log_path, "wb"),  # noqa: SIM115
                            "log_path": log_path}
    args.update(kw)
    return runner.run(path, **args)


def log(tmp_path: Path) -> bytes:
    return (tmp_path / "hook.log").read_bytes()


def pid_from(file: Path) -> int:
    return int(file.read_text().strip())


def survivors(pgid: int) -> list[psutil.Process]:
    """Live (non-zombie) processes in process group ``pgid``, other than ourselves."""
    found = []
    for p in psutil.process_iter():
        if p.pid == os.getpid():
            continue
        try:
            if os.getpgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except (ProcessLookupError, psutil.NoSuchProcess):
            pass  # exited while we looked
    return found


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture(autouse=True)
def _no_leftovers(tmp_path: Path) -> Iterator[None]:
    """Safety net: kill anything a hook left running in tmp_path (tests clean up too)."""
    yield
    for p in psutil.process_iter():
        try:
            if p.pid != os.getpid() and p.cwd().startswith(str(tmp_path)):
                p.kill()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass


# --- exit status ---------------------------------------------------------------------------


def test_exit_zero_is_ok(tmp_path: Path) -> None:
    """A hook that exits 0 is ok, with no signal, timeout, cancel or exec error."""
    result = run(tmp_path, hook(tmp_path, "echo hi\nexit 0\n"))
    assert result.ok
    assert (result.exit_code, result.signal, result.timed_out, result.cancelled) == (
        0, None, False, False)
    assert result.exec_error is None
    assert not result.truncated
    assert result.head == b"hi\n"
    assert result.tail == b""
    assert result.output() == "hi\n"
    assert result.output_path == str(tmp_path / "hook.log")
    assert log(tmp_path) == b"hi\n"
    assert result.lines == 1


def test_exit_one_is_not_ok(tmp_path: Path) -> None:
    """A failing hook reports its exit code and is not ok."""
    result = run(tmp_path, hook(tmp_path, "exit 1\n"))
    assert result.exit_code == 1
    assert result.signal is None
    assert not result.ok


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["KILL", "TERM"])
def test_killed_by_own_signal_is_128_plus_n(tmp_path: Path, sig: signal.Signals) -> None:
    """A hook killed by a signal reports 128+n and the signal, like a shell does."""
    result = run(tmp_path, hook(tmp_path, f"kill -{sig.name[3:]} $$\nsleep 5\n"))
    assert result.exit_code == 128 + sig
    assert result.signal == sig
    assert not result.timed_out
    assert not result.ok


# --- output: order, lines, cap, memory ----------------------------------------------------


def test_stdout_and_stderr_keep_arrival_order_in_the_log(tmp_path: Path) -> None:
    """stdout and stderr share one pipe, so the log interleaves them as they were written."""
    body = "echo out1\necho err1 >&2\necho out2\necho err2 >&2\necho out3\n"
    result = run(tmp_path, hook(tmp_path, body))
    assert result.ok
    assert log(tmp_path) == b"out1\nerr1\nout2\nerr2\nout3\n"
    assert result.head == log(tmp_path)


def test_on_line_gets_whole_lines_only(tmp_path: Path) -> None:
    """on_line sees whole lines: split writes arrive as one, a last unterminated one too."""
    lines: list[str] = []
    body = "printf 'one\\ntw'\nsleep 0.2\nprintf 'o\\nthr'\nsleep 0.1\nprintf 'ee'\n"
    result = run(tmp_path, hook(tmp_path, body), on_line=lines.append)
    assert result.ok
    assert lines == ["one", "two", "three"]
    assert log(tmp_path) == b"one\ntwo\nthree"


def test_on_line_splits_an_endless_line_at_line_max(tmp_path: Path) -> None:
    """A huge run without newlines is passed on in LINE_MAX pieces, not buffered forever."""
    lines: list[str] = []
    size = 3 * output.LINE_MAX + 100
    result = run(tmp_path, hook(tmp_path, f"head -c {size} /dev/zero | tr '\\0' x\necho\n"),
                 on_line=lines.append)
    assert result.ok
    assert all(len(line) <= output.LINE_MAX for line in lines)
    assert "".join(lines) == "x" * size


def test_cap_exactly_reached_is_not_truncated(tmp_path: Path) -> None:
    """Output of exactly ``cap`` bytes is kept whole, with no marker; one more comes after
    a marker (the log ends with the output's end), and more than KEEP beyond the cap
    drops what lies between."""
    exact = run(tmp_path, hook(tmp_path, "printf 0123456789\n"), cap=10)
    assert not exact.truncated
    assert log(tmp_path) == b"0123456789"
    over = run(tmp_path, hook(tmp_path, "printf 0123456789X\n"), cap=10)
    assert over.truncated
    assert log(tmp_path) == b"0123456789\n[initd: output past 10 bytes; its last 1 bytes " \
        b"follow]\nX"
    assert over.head == b"0123456789X"  # memory still has the whole (short) output
    (tmp_path / "data").write_bytes(b"a" * 10 + b"b" * 5 + b"c" * output.KEEP)
    far = run(tmp_path, hook(tmp_path, "cat data\n"), cap=10)  # one write: root reads all
    assert log(tmp_path) == b"a" * 10 + b"\n[initd: output truncated at 10 bytes; 5 more " \
        b"bytes dropped; its last 32768 bytes follow]\n" + b"c" * output.KEEP
    assert far.truncated and far.tail.endswith(b"c")


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_a_gigabyte_of_output_is_capped_in_the_log_and_in_memory(tmp_path: Path) -> None:
    """1 GiB of output: log capped with a marker, head/tail bounded, our RSS flat."""
    cap = 2**20
    total = 2**30
    me = psutil.Process()
    rss_before = me.memory_info().rss
    path = hook(tmp_path, f"head -c {total} /dev/zero\necho END\n")
    result = run(tmp_path, path, cap=cap, timeout=120)
    rss_growth = me.memory_info().rss - rss_before
    assert result.ok, result
    assert result.truncated
    data = log(tmp_path)
    assert data[:cap] == b"\0" * cap
    # past the cap a drain read the rest (process/pipes.py): the log ends with its last KEEP bytes
    marker, end = data[cap:].split(b"]\n", 1)
    assert re.fullmatch(rb"\n\[initd: output truncated at 1048576 bytes; (at least )?\d+ "
                        rb"more bytes dropped; its last 32768 bytes follow", marker), marker
    assert end == b"\0" * (32768 - 4) + b"END\n"
    assert len(result.head) <= 32768
    assert len(result.tail) <= 32768
    assert result.head == b"\0" * len(result.head)
    assert result.tail.endswith(b"\0END\n")
    assert rss_growth < 20 * 2**20, f"RSS grew by {rss_growth} bytes"


def test_memory_keeps_the_end_of_output_just_over_the_head(tmp_path: Path) -> None:
    """Output just over KEEP in one write: the tail must still hold how the hook ended."""
    size = output.KEEP + 8000
    (tmp_path / "data").write_bytes(b"a" * (size - 4) + b"END\n")
    result = run(tmp_path, hook(tmp_path, "cat data\n"))  # one write of the whole file
    assert result.ok
    assert log(tmp_path) == (tmp_path / "data").read_bytes()
    assert result.tail.endswith(b"END\n")
    assert result.output().endswith("END\n")


# --- timeout and cancel ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(60)  # (the hook sleeps 1000 s: only the timeout ends it sooner)
def test_timeout_stops_the_whole_group(tmp_path: Path) -> None:
    """A hook that runs forever is stopped at the timeout, group and all, with 124."""
    path = hook(tmp_path, "echo $$ > leader.pid\nsleep 1000 &\nsleep 1000\n")
    result = run(tmp_path, path, timeout=1, grace=1)
    assert result.timed_out
    assert not result.cancelled
    assert result.exit_code == 124
    assert not result.ok
    assert result.signal == signal.SIGTERM  # TERM ended it: no KILL, no grace waited out
    assert result.duration >= 1  # not before its timeout
    assert survivors(pid_from(tmp_path / "leader.pid")) == []
    assert log(tmp_path).endswith(
        b"\n[initd: timed out after 1s; the hook's process group was stopped]\n")


@pytest.mark.slow
@pytest.mark.timeout(60)  # (the hook sleeps 1000 s: only the timeout ends it sooner)
def test_timeout_kills_a_hook_that_ignores_term(tmp_path: Path) -> None:
    """TERM ignored by the whole group: KILL follows after ``grace`` and nothing survives."""
    path = hook(tmp_path, "echo $$ > leader.pid\ntrap '' TERM\nsleep 1000\n")
    result = run(tmp_path, path, timeout=1, grace=0.5)
    assert result.timed_out
    assert result.exit_code == 124
    assert result.signal == signal.SIGKILL
    assert result.duration >= 1 + 0.5  # KILL only once the grace was over
    assert survivors(pid_from(tmp_path / "leader.pid")) == []


@pytest.mark.slow
@pytest.mark.timeout(60)  # (the grandchild holds the pipe for 1000 s)
def test_timeout_returns_although_an_escaped_grandchild_holds_the_pipe(tmp_path: Path) -> None:
    """An escaped grandchild holding stdout cannot stretch a timeout past grace + DRAIN:
    run() returns while it is still there, holding the pipe (a run that waited for the
    pipe would wait its 1000 s, past this test's deadline)."""
    path = hook(tmp_path, "setsid sh -c 'echo $$ > daemon.pid; exec sleep 1000' &\n"
                          "while [ ! -s daemon.pid ]; do sleep 0.01; done\nsleep 1000\n")
    try:
        result = run(tmp_path, path, timeout=3, grace=0.5)  # (3: time to start the daemon)
        assert result.timed_out
        assert result.exit_code == 124
        assert result.signal == signal.SIGTERM  # the leader went on TERM
        assert result.duration >= 3
        assert psutil.pid_exists(pid_from(tmp_path / "daemon.pid"))  # it really held on
    finally:
        os.kill(pid_from(tmp_path / "daemon.pid"), signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.timeout(60)  # (the hook sleeps 1000 s, its timeout is 1000 s)
def test_cancel_stops_the_hook(tmp_path: Path) -> None:
    """Setting ``cancel`` stops the group like a timeout, but reports cancelled."""
    cancel = threading.Event()
    path = hook(tmp_path, "echo $$ > leader.pid\nsleep 1000\n")
    timer = threading.Timer(0.5, cancel.set)
    armed = time.monotonic()
    timer.start()
    try:
        result = run(tmp_path, path, timeout=1000, grace=1, cancel=cancel)
    finally:
        timer.cancel()
    assert result.cancelled
    assert not result.timed_out
    assert not result.ok
    assert result.exit_code != 124
    assert result.signal == signal.SIGTERM  # TERM ended it: no KILL, no grace waited out
    assert time.monotonic() - armed >= 0.5  # not before the cancel
    assert survivors(pid_from(tmp_path / "leader.pid")) == []
    assert log(tmp_path).endswith(
        b"\n[initd: cancelled; the hook's process group was stopped]\n")


# --- daemons holding stdout -----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(60)  # (the daemon holds stdout for 1000 s, the timeout is 1000 s)
def test_daemon_in_the_group_holding_stdout_does_not_hold_run(tmp_path: Path) -> None:
    """A same-group daemon holding stdout cannot keep run() past the leader's exit + DRAIN:
    run() returns, not timed out, while the daemon still holds the pipe."""
    body = ("echo $$ > leader.pid\n(trap '' TERM HUP; exec sleep 1000) &\n"
            "echo $! > daemon.pid\necho started\nexit 0\n")
    result = run(tmp_path, hook(tmp_path, body), timeout=1000)
    daemon = pid_from(tmp_path / "daemon.pid")
    try:
        assert result.ok
        assert result.exit_code == 0
        assert not result.timed_out
        assert result.head == b"started\n"
        assert psutil.pid_exists(daemon)  # it really held the pipe past the leader
        assert os.getpgid(daemon) == pid_from(tmp_path / "leader.pid")
    finally:
        os.kill(daemon, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.timeout(60)  # (the daemon holds stdout for 1000 s, the timeout is 1000 s)
def test_daemon_escaping_the_group_does_not_hold_run(tmp_path: Path) -> None:
    """A daemon that setsid()s out of the group and keeps stdout open cannot hold run():
    it returns, not timed out, while the daemon still holds the pipe."""
    body = ("echo $$ > leader.pid\n"
            "setsid sh -c 'echo $$ > daemon.pid; exec sleep 1000' &\n"
            "while [ ! -s daemon.pid ]; do sleep 0.01; done\necho started\nexit 0\n")
    result = run(tmp_path, hook(tmp_path, body), timeout=1000)
    daemon = pid_from(tmp_path / "daemon.pid")
    try:
        assert result.ok
        assert not result.timed_out
        assert result.head == b"started\n"
        assert psutil.pid_exists(daemon)
        assert os.getsid(daemon) == daemon != pid_from(tmp_path / "leader.pid")
    finally:
        os.kill(daemon, signal.SIGKILL)


# --- stdin ----------------------------------------------------------------------------------


def test_stdin_bytes_reach_the_hook(tmp_path: Path) -> None:
    """Given stdin bytes, the hook reads them and then EOF."""
    result = run(tmp_path, hook(tmp_path, "cat\n"), stdin=b"hello\n")
    assert result.ok
    assert result.head == b"hello\n"


@pytest.mark.timeout(120)
def test_no_stdin_is_dev_null(tmp_path: Path) -> None:
    """Without stdin the hook reads EOF at once instead of hanging on initd's stdin (here
    a pipe that never ends, whatever pytest's own stdin is)."""
    body = "readlink /proc/$$/fd/0\ncat\necho done\n"
    never_ends, writer = os.pipe()
    ours = os.dup(0)
    os.dup2(never_ends, 0)
    try:
        result = run(tmp_path, hook(tmp_path, body), timeout=60)
    finally:
        os.dup2(ours, 0)
        for fd in (ours, never_ends, writer):
            os.close(fd)
    assert result.ok
    assert not result.timed_out  # (cat on a stdin that never ends: 60 s, then timed out)
    assert result.head == b"/dev/null\ndone\n"


@pytest.mark.timeout(120)
def test_large_unread_stdin_does_not_block(tmp_path: Path) -> None:
    """2 MiB of stdin the hook never reads: run() neither blocks nor raises (EPIPE).
    Blocked, it would end at the timeout (timed out: not ok) or never (this deadline)."""
    result = run(tmp_path, hook(tmp_path, "echo bye\nexit 0\n"), stdin=b"x" * 2**21,
                 timeout=60)
    assert result.ok
    assert not result.timed_out
    assert result.head == b"bye\n"


@pytest.mark.timeout(120)
def test_stdin_read_in_part_then_the_hook_goes_on(tmp_path: Path) -> None:
    """The hook reads a little stdin and carries on with the pipe still open: no hang
    (a hang ends at the timeout, timed out: not ok; or never: this deadline)."""
    body = "head -c 5\necho\nsleep 0.2\necho done\n"
    result = run(tmp_path, hook(tmp_path, body), stdin=b"hello" + b"x" * 2**21, timeout=60)
    assert result.ok
    assert not result.timed_out
    assert result.head == b"hello\ndone\n"


@pytest.mark.timeout(10)
def test_large_stdin_is_delivered_whole(tmp_path: Path) -> None:
    """A hook that reads all of a 2 MiB stdin gets every byte, then EOF."""
    result = run(tmp_path, hook(tmp_path, "wc -c\n"), stdin=b"y" * 2**21, timeout=5)
    assert result.ok
    assert result.head.strip() == str(2**21).encode()


def test_empty_stdin_is_eof(tmp_path: Path) -> None:
    """stdin=b'' gives an immediately closed pipe: the hook sees EOF, not a hang."""
    result = run(tmp_path, hook(tmp_path, "wc -c\n"), stdin=b"", timeout=5)
    assert result.ok
    assert result.head.strip() == b"0"


# --- the hook file and exec failures ---------------------------------------------------------


def test_hook_that_deletes_its_own_file(tmp_path: Path) -> None:
    """A hook may remove itself while it runs (run-once hooks do)."""
    path = hook(tmp_path, 'rm -- "$0"\necho gone\n')
    result = run(tmp_path, path)
    assert result.ok
    assert result.output() == "gone\n"
    assert not os.path.exists(path)


def test_file_without_exec_bit_is_126(tmp_path: Path) -> None:
    """A hook file that is not executable gives 126 and an exec error, not an exception."""
    path = hook(tmp_path, "echo never\n")
    os.chmod(path, 0o644)
    result = run(tmp_path, path)
    assert result.exit_code == 126
    assert result.exec_error
    assert not result.ok
    assert log(tmp_path).startswith(b"[initd: ")
    assert result.exec_error.encode() in log(tmp_path)


def test_missing_file_is_127(tmp_path: Path) -> None:
    """A hook path that does not exist gives 127, not an exception."""
    path = str(tmp_path / "nonexistent")
    result = run(tmp_path, path)
    assert result.exit_code == 127
    assert result.exec_error == f"{path}: No such file or directory"
    assert log(tmp_path) == f"[initd: {path}: No such file or directory]\n".encode()


def test_bad_shebang_interpreter_is_127(tmp_path: Path) -> None:
    """``#!/nonexistent/interp`` fails exec with ENOENT: 127, not an exception."""
    path = tmp_path / "hook"
    path.write_text("#!/nonexistent/interp\necho never\n")
    path.chmod(0o755)
    result = run(tmp_path, str(path))
    assert result.exit_code == 127
    assert result.exec_error
    assert b"[initd: " in log(tmp_path)
    assert b"never" not in log(tmp_path)


def test_missing_working_directory_is_a_result(tmp_path: Path) -> None:
    """A cwd that is not there is reported in the Result (126, exec_error), not raised."""
    missing = str(tmp_path / "no-such-dir")
    result = run(tmp_path, hook(tmp_path, "echo never\n"), cwd=missing)
    assert result.exit_code == 126
    assert not result.ok
    assert result.exec_error is not None
    assert missing in result.exec_error
    assert missing.encode() in log(tmp_path)


def test_no_fd_leaks(tmp_path: Path) -> None:
    """Pipes, pidfd and the log are closed however the hook ended."""
    before = open_fds()
    run(tmp_path, hook(tmp_path, "echo hi\n"), stdin=b"data")
    run(tmp_path, hook(tmp_path, "sleep 1000\n"), timeout=0.2, grace=0.5)
    run(tmp_path, str(tmp_path / "nonexistent"))
    run(tmp_path, hook(tmp_path, "exit 0\n"), cwd=str(tmp_path / "missing"))
    assert open_fds() == before


# --- the log file ---------------------------------------------------------------------------


# The log is made by the status store (StatusStore.new_log, through agentfs): a new file
# every run, whatever was at its name, given to the store's owner.


def run_logged(tmp_path: Path, path: str,
               owner: tuple[int, int] | None = None) -> tuple[runner.Result, Path]:
    out, log_path = StatusStore(str(tmp_path / "state"), owner).new_log("hook")
    return run(tmp_path, path, log=out, log_path=log_path), Path(log_path)


def test_existing_log_owned_by_another_user_is_replaced(tmp_path: Path) -> None:
    """A log left behind under another owner is replaced by a new file, not reused."""
    old = tmp_path / "state" / "output" / "hook.log"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"old contents that are much longer than the new ones\n")
    os.chown(old, NOBODY, NOBODY)
    result, path = run_logged(tmp_path, hook(tmp_path, "echo new\n"))
    assert result.ok
    st = path.stat()
    assert (st.st_uid, st.st_gid) == (os.getuid(), os.getgid())
    assert path.read_bytes() == b"new\n"


def test_existing_log_symlink_is_replaced_not_followed(tmp_path: Path) -> None:
    """A symlink at the log path is replaced, never written through."""
    target = tmp_path / "precious"
    target.write_bytes(b"keep me\n")
    link = tmp_path / "state" / "output" / "hook.log"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    result, path = run_logged(tmp_path, hook(tmp_path, "echo new\n"))
    assert result.ok
    assert not path.is_symlink()
    assert path.read_bytes() == b"new\n"
    assert target.read_bytes() == b"keep me\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_the_log_belongs_to_the_stores_owner(tmp_path: Path) -> None:
    """The new log is the owner's (so the hook's user can read it)."""
    result, path = run_logged(tmp_path, hook(tmp_path, "echo hi\n"), (NOBODY, NOBODY))
    assert result.ok
    st = path.stat()
    assert (st.st_uid, st.st_gid) == (NOBODY, NOBODY)
    assert path.read_bytes() == b"hi\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_the_log_belongs_to_the_owner_on_exec_failure_too(tmp_path: Path) -> None:
    """Even when the hook cannot start, the log with initd's note is the owner's."""
    result, path = run_logged(tmp_path, str(tmp_path / "nonexistent"), (NOBODY, NOBODY))
    assert result.exit_code == 127
    st = path.stat()
    assert (st.st_uid, st.st_gid) == (NOBODY, NOBODY)


def test_a_failing_on_running_never_leaves_the_hook_unsupervised(tmp_path: Path) -> None:
    """on_running records the hook as running (in a state the agent may have broken): if
    it raises, the hook it was told about is stopped before the error goes on."""
    seen: list[int] = []

    def broken(child: Any) -> None:
        seen.append(child.pid)
        raise OSError("status.json: a symbolic link: not written")

    with pytest.raises(OSError, match="symbolic link"):
        run(tmp_path, hook(tmp_path, "sleep 1000\n"), on_running=broken)
    assert seen and not psutil.pid_exists(seen[0])


def test_only_a_hook_still_running_is_marked_running(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The running mark is a durable write: a hook done before RUNNING_MARK_AFTER has
    only its result written; one still running then is told about while it runs (its
    group alive, as recovery needs it), once. (Orders, not clocks: the quick hook gets
    a minute to be quick in; the slow one cannot end before it is told.)"""
    told: list[bool] = []

    def mark(child: Any) -> None:
        told.append(child.poll() is None and child.group_alive())

    monkeypatch.setattr(runner, "RUNNING_MARK_AFTER", 60.0)
    quick = run(tmp_path, hook(tmp_path, "exit 0\n"), on_running=mark)
    assert quick.ok and told == []
    monkeypatch.setattr(runner, "RUNNING_MARK_AFTER", 0.05)
    # Waits on a file that only the mark creates: the hook cannot end before it is told.
    flag = tmp_path / "marked"
    slow = run(tmp_path, hook(tmp_path, f"while [ ! -e {flag} ]; do sleep 0.01; done\n"),
               on_running=lambda child: (mark(child), flag.touch()))
    assert slow.ok and told == [True]


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A real file system with 64 KiB: a log written there soon meets ENOSPC."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    where = tmp_path / "small"
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)], check=True)
    yield where
    subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.slow
def test_a_full_disk_stops_the_log_never_the_hooks_supervision(tmp_path: Path,
                                                               full_disk: Path) -> None:
    """ENOSPC on the log made runner raise: the hook was never stopped (alive minutes past
    timeout + grace). Now the log stops, and the timeout, the output kept in memory and
    the result go on."""
    mine = f"1000.{uuid.uuid4().int % 10**6:06d}"  # not another suite's sleep 1000
    path = hook(tmp_path, "head -c 1000000 /dev/zero | tr '\\\\0' x; echo; echo end; "
                          f"sleep {mine}\n")
    result = run(tmp_path, path, timeout=5.0, grace=0.5,  # (5: time to print it all)
                 log_path=str(full_disk / "hook.log"))
    assert result.timed_out and result.exit_code == 124
    assert result.log_error is not None and "space" in result.log_error.lower()
    assert result.output().rstrip().endswith("end")  # memory kept the tail
    assert not [p for p in psutil.process_iter(["cmdline"])
                if p.info["cmdline"] == ["sleep", mine]
                and p.status() != psutil.STATUS_ZOMBIE]
