"""initd/process/forkexec.py starts children with os.fork and os.execve, as subprocess.Popen
does in C, without Popen's module. Every way initd starts a child must come out the same as
Popen's: each case runs the same command through both and compares what the child saw
and what the parent got (output, exit code, the error of a failed start)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from initd.process import forkexec

BASE = {"env": {"PATH": "/usr/bin:/bin", "HOME": "/"}, "cwd": "/", "stdin": forkexec.DEVNULL,
        "stdout": forkexec.PIPE, "stderr": forkexec.PIPE, "process_group": 0,
        "start_new_session": False, "restore_signals": True, "close_fds": True,
        "pass_fds": (), "user": None, "group": None, "extra_groups": None}


def both(argv: list[str], **changes: object) -> tuple[object, object]:
    """(forkexec's outcome, Popen's) of one start: (returncode, stdout, stderr), or the
    start's error as (type, errno, filename)."""

    def outcome(start: object) -> object:
        try:
            child = start(argv, **{**BASE, **changes})  # type: ignore[operator]
        except OSError as err:
            return type(err), err.errno, err.filename
        except ValueError as err:
            return ValueError, str(err)
        out = child.stdout.read() if child.stdout else b""
        err = child.stderr.read() if child.stderr else b""
        for stream in (child.stdin, child.stdout, child.stderr):
            if stream is not None:
                stream.close()
        return child.wait(), out, err

    return outcome(forkexec.Process), outcome(subprocess.Popen)


@pytest.mark.parametrize(("argv", "changes"), [
    (["sh", "-c", "echo out; echo err >&2; exit 3"], {}),
    (["sh", "-c", "kill -TERM $$"], {}),  # killed by a signal: -15
    (["sh", "-c", "echo out; echo err >&2"], {"stderr": forkexec.STDOUT}),
    (["sh", "-c", "cat; echo done"], {"stdin": forkexec.DEVNULL}),
    (["sh", "-c", "echo x >&2"], {"stderr": forkexec.DEVNULL}),
    (["sh", "-c", "pwd; echo $HOME $ONLY"], {"cwd": "/usr", "env": {"PATH": "/bin",
                                                                    "ONLY": "é"}}),
    (["sh", "-c", "ps -o pgid=,sid= -p $$"], {}),  # its own group, our session
    (["sh", "-c", "ps -o pgid=,sid= -p $$"], {"process_group": None,
                                              "start_new_session": True}),
    (["grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"], {}),  # nothing blocked, ignored
    (["sh", "-c", "ls /proc/$$/fd"], {}),  # 0 1 2 only: nothing of ours leaks
    (["/nonexistent/program"], {}),  # ENOENT, named by the program
    (["no-such-program-anywhere"], {}),  # searched in the child's PATH
    (["/etc/hostname"], {}),  # EACCES: not executable
    (["/"], {}),  # a directory
    (["true"], {"cwd": "/nonexistent"}),  # the chdir failed: named by the cwd
    (["true"], {"env": {"A=B": "1"}}),  # refused before any fork
    (["tr\0ue"], {}),  # a NUL byte
    (["true"], {"env": {"A": "x\0y"}}),
])
def test_a_start_comes_out_as_popens(argv: list[str], changes: dict[str, object]) -> None:
    mine, popens = both(argv, **changes)
    if argv[-1].startswith("ps "):  # (its own group: a different number each start)
        assert isinstance(mine, tuple) and isinstance(popens, tuple)
        pgid, sid = mine[1].split()
        assert (int(pgid) == os.getpgrp(), int(sid) == os.getsid(0)) == \
            (False, not changes.get("start_new_session"))
        assert (mine[0], len(mine[1].split())) == (popens[0], len(popens[1].split()))
        return
    assert mine == popens


def test_an_fd_passed_is_the_childs_and_the_others_are_not() -> None:
    read, write = os.pipe()
    try:
        argv = ["sh", "-c", f"echo hi > /proc/$$/fd/{write}; exec ls /proc/self/fd"]
        mine, popens = both(argv, pass_fds=(write,))
        assert mine == popens
        assert isinstance(mine, tuple)
        fds = {int(fd) for fd in mine[1].split()}  # (ls's own: the one it lists with)
        assert {0, 1, 2, write} <= fds and read not in fds and len(fds) == 5
        os.close(write)
        write = -1
        assert os.read(read, 100) == b"hi\nhi\n"
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)


def test_a_start_that_fails_leaves_no_descriptor_open() -> None:
    """Every pipe, /dev/null and the error pipe are closed again when the exec fails,
    whichever way it fails (the supervisor lives as long as the container)."""
    def open_fds() -> set[str]:
        return set(os.listdir("/proc/self/fd"))

    before = open_fds()
    for argv, changes in ((["/nonexistent"], {}), (["true"], {"cwd": "/nonexistent"}),
                          (["true"], {"env": {"A=B": "1"}}),
                          (["/etc/hostname"], {"stdin": forkexec.PIPE})):
        with pytest.raises((OSError, ValueError)):
            forkexec.Process(argv, **{**BASE, **changes})
    assert open_fds() - before == set()


def test_stdin_from_a_pipe_reaches_the_child() -> None:
    child = forkexec.Process(["tr", "a-z", "A-Z"], **{**BASE, "stdin": forkexec.PIPE,
                                                       "stderr": None})
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(b"hello")
    child.stdin.close()
    assert (child.stdout.read(), child.wait()) == (b"HELLO", 0)
    child.stdout.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="cannot run here: changing credentials "
                    "needs root")
def test_credentials_are_set_as_popen_sets_them() -> None:
    argv = ["sh", "-c", "id -u; id -g; id -G"]
    mine, popens = both(argv, user=65534, group=65534, extra_groups=[4, 27])
    assert mine == popens == (0, b"65534\n65534\n65534 4 27\n", b"")


def test_poll_is_none_until_the_child_ends_and_its_code_stays() -> None:
    read, write = os.pipe()
    child = forkexec.Process(["sh", "-c", "read x; exit 7"], **{**BASE, "stdin": read,
                                                                "stdout": None,
                                                                "stderr": None})
    os.close(read)
    try:
        assert child.poll() is None
    finally:
        os.close(write)  # (EOF: read returns, the child exits)
    assert child.wait() == 7
    assert child.poll() == 7 and child.returncode == 7


def test_a_child_forked_from_a_thread_starts_clean() -> None:
    """A stop or a hook may start a child from a worker thread: the fork is the same."""
    import threading

    seen: list[object] = []
    thread = threading.Thread(target=lambda: seen.append(both(
        ["grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"])))
    thread.start()
    thread.join()
    mine, popens = seen[0]  # type: ignore[misc]
    assert mine == popens


def test_a_low_standard_descriptor_is_moved_out_of_the_way() -> None:
    """Our own stdout closed: the pipe for the child's stdout may be fd 1, and its dup2
    must not overwrite the source of the next."""
    script = ("import os, sys; os.close(1); from initd.process import forkexec as f; "
              "p = f.start(['sh', '-c', 'echo out; echo err >&2'], env={'PATH': '/bin'}, "
              "cwd='/', stdin=f.DEVNULL, stdout=f.PIPE, stderr=f.PIPE, process_group=0, "
              "start_new_session=False, restore_signals=True, close_fds=True, pass_fds=(), "
              "user=None, group=None, extra_groups=None); "
              "sys.stderr.write(repr((p.stdout.read(), p.stderr.read(), p.wait())))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert done.stderr == repr((b"out\n", b"err\n", 0))


def test_the_stream_constants_are_subprocesss() -> None:
    assert (forkexec.PIPE, forkexec.STDOUT, forkexec.DEVNULL) == \
        (subprocess.PIPE, subprocess.STDOUT, subprocess.DEVNULL)
