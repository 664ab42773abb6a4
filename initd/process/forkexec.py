"""Starting a child with CPython's own fork+exec, without the ``subprocess`` module.

``subprocess.Popen`` on Linux is a layer over ``_posixsubprocess.fork_exec``, which does
everything between the fork and the exec in C (vfork when no credentials change, the
descriptors, the session or group, setgroups/setgid/setuid, the default signal
dispositions) and reports a failed exec on a pipe as ``OSError:<hex errno>:<text>``.
The module around it imports ``signal``'s enum, ``threading``, ``selectors``,
``locale`` and ``re``: ~8 ms of CPU of every initd start (bench/cpu.py, row 31) that
starts nothing but its agent. So ``Process`` calls ``fork_exec`` itself, as Popen does,
on the CPython it was written and tested against (3.11: ``LEAN``); on any other, where
the function's arguments may differ, ``start`` is ``subprocess.Popen``, which has the
same attributes and takes the same constants.

A ``Process`` has what initd's spawn uses of a Popen: ``pid``, ``args``, ``returncode``,
``stdin``/``stdout``/``stderr`` (a buffered binary file for each PIPE), ``poll()`` and
``wait()``. One waitpid at a time (a lock, as Popen has): a stop in a worker thread and
a look from the supervisor's loop never both take the same exit status.
"""

from __future__ import annotations

import _thread
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping, Sequence
    from typing import IO, Any, TypeAlias

    Started: TypeAlias = "Process | subprocess.Popen[bytes]"  # start's (and git's Popen)

# subprocess's own values (tests/test_spawn.py holds them equal): a Spec's streams mean
# the same to Process and to Popen
PIPE = -1
STDOUT = -2
DEVNULL = -3

LEAN = sys.version_info[:2] == (3, 11)


class Process:
    def __init__(self, args: Sequence[str], *, env: Mapping[str, str], cwd: str | None,
                 stdin: Any, stdout: Any, stderr: Any, process_group: int | None,
                 start_new_session: bool, restore_signals: bool, close_fds: bool,
                 pass_fds: Sequence[int], user: int | None, group: int | None,
                 extra_groups: Sequence[int] | None) -> None:
        self.args = list(args)
        self.returncode: int | None = None
        self.stdin: IO[bytes] | None = None
        self.stdout: IO[bytes] | None = None
        self.stderr: IO[bytes] | None = None
        self._waiting = _thread.allocate_lock()
        theirs: list[int] = []  # the child's ends, closed here once it has them
        ours: list[int] = []  # our ends of its pipes, kept as its stdin/stdout/stderr
        try:
            p2cread, p2cwrite = _stream(stdin, theirs, ours, reading=True)
            c2pread, c2pwrite = _stream(stdout, theirs, ours, reading=False)
            if stderr == STDOUT:
                errread, errwrite = -1, (c2pwrite if c2pwrite != -1 else 1)
            else:
                errread, errwrite = _stream(stderr, theirs, ours, reading=False)
            self.pid = _start(self.args, env, cwd, (p2cread, p2cwrite, c2pread, c2pwrite,
                                                    errread, errwrite),
                              process_group, start_new_session, restore_signals,
                              close_fds, pass_fds, user, group, extra_groups)
        except BaseException:
            for fd in theirs + ours:
                os.close(fd)
            raise
        for fd in theirs:
            os.close(fd)
        self.stdin, self.stdout, self.stderr = (  # (the caller closes them)
            None if fd == -1 else open(fd, mode)  # noqa: SIM115
            for fd, mode in ((p2cwrite, "wb"), (c2pread, "rb"), (errread, "rb")))

    def poll(self) -> int | None:
        """The returncode (negative: killed by that signal) once exited, else None."""
        if self.returncode is None and self._waiting.acquire(False):
            try:
                if self.returncode is None:
                    self._reaped(os.WNOHANG)
            finally:
                self._waiting.release()
        return self.returncode

    def wait(self) -> int:
        while (code := self.returncode) is None:
            with self._waiting:
                if self.returncode is None:
                    self._reaped(0)
        return code

    def _reaped(self, flags: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:  # (reaped by someone else: as Popen, no status left)
            pid, status = self.pid, 0
        if pid == self.pid:
            self.returncode = os.waitstatus_to_exitcode(status)


def _stream(how: Any, theirs: list[int], ours: list[int], reading: bool
            ) -> tuple[int, int]:
    """One standard stream: (its read end, its write end), -1 for none: for the child's
    stdin, (the child's, ours); for its stdout or stderr, (ours, the child's)."""
    if how is None:
        return -1, -1
    if how == PIPE:
        read, write = os.pipe()  # (both close-on-exec: the child gets a dup2'd copy)
        theirs.append(read if reading else write)
        ours.append(write if reading else read)
        return read, write
    if how == DEVNULL:
        fd = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        theirs.append(fd)
        return (fd, -1) if reading else (-1, fd)
    fd = how if isinstance(how, int) else how.fileno()
    return (fd, -1) if reading else (-1, fd)


def _start(args: list[str], env: Mapping[str, str], cwd: str | None,
           fds: tuple[int, int, int, int, int, int], process_group: int | None,
           new_session: bool, restore_signals: bool, close_fds: bool,
           pass_fds: Sequence[int], uid: int | None, gid: int | None,
           groups: Sequence[int] | None) -> int:
    """fork_exec as Popen calls it; raises OSError for a child that could not exec."""
    from _posixsubprocess import fork_exec

    environ = []
    for key, value in env.items():
        name = os.fsencode(key)
        if b"=" in name:
            raise ValueError("illegal environment variable name")
        environ.append(name + b"=" + os.fsencode(value))
    program = os.fsencode(args[0])
    candidates = (program,) if os.path.dirname(program) else tuple(
        os.path.join(os.fsencode(directory), program) for directory in os.get_exec_path(env))
    error_read, error_write = os.pipe()
    while error_write < 3:  # (never one of the fds the child's 0, 1 and 2 are dup'd to)
        low, error_write = error_write, os.dup(error_write)
        os.close(low)
    try:
        try:
            pid = fork_exec(  # (None for cwd and preexec_fn, as Popen passes them; the
                args, candidates, close_fds,  # stubs say otherwise)
                tuple(sorted({*map(int, pass_fds), error_write})), cwd,  # type: ignore[arg-type]
                environ, *fds, error_read, error_write, restore_signals, new_session,
                -1 if process_group is None else process_group, gid,
                None if groups is None else list(groups), uid, -1,
                None, True)  # type: ignore[arg-type]
        finally:
            os.close(error_write)
        report = b""
        while len(report) <= 50_000:  # (EOF: the exec closed it, close-on-exec)
            part = os.read(error_read, 50_000)
            if not part:
                break
            report += part
    finally:
        os.close(error_read)
    if report:
        _reap_quietly(pid)
        raise _exec_error(report, args[0], cwd)
    return pid


def _reap_quietly(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _exec_error(report: bytes, program: str, cwd: str | None) -> OSError:
    """The OSError the child reported (``OSError:<hex errno>:<text>``); ``noexec``: it
    failed before the exec, which is its cwd's chdir."""
    name, _, rest = report.partition(b":")
    number, _, text = rest.partition(b":")
    try:
        code = int(number, 16)
    except ValueError:
        code = 0
    if name != b"OSError" or not code:
        return OSError(0, f"the child could not start: {report[:200]!r}", program)
    return OSError(code, os.strerror(code), cwd if text == b"noexec" else program)


def start(args: Sequence[str], **options: Any) -> Any:
    """A started child: a Process on 3.11, a subprocess.Popen elsewhere."""
    if LEAN:
        return Process(args, **options)
    import subprocess

    return subprocess.Popen(list(args), **options)
