"""Starting a child with ``os.fork`` and ``os.execve``: public calls only, as
``subprocess.Popen`` does in C and without its module.

``subprocess`` imports ``threading``, ``selectors``, ``locale`` and ``contextlib`` beside
``signal``: several milliseconds of CPU of every initd start that starts nothing but its
agent (bench/README.md, row 31). What happens between the fork and the exec is Popen's, in
its order (``_child``): the standard streams, every other descriptor closed but those
passed, the cwd, SIGPIPE and SIGXFSZ back to their default and the mask emptied, a
session or a group of its own, then setgroups, setgid and setuid, then the exec of each
candidate of the child's PATH. A failure in the child comes back on a close-on-exec pipe
as ``OSError:<hex errno>:<where>``, and ``Process`` raises it as Popen would.

A ``Process`` has what initd's spawn uses of a Popen: ``pid``, ``args``, ``returncode``,
``stdin``/``stdout``/``stderr`` (a buffered binary file for each PIPE), ``poll()`` and
``wait()``. One waitpid at a time (a lock, as Popen has): a stop in a worker thread and
a look from the supervisor's loop never both take the same exit status.
"""

from __future__ import annotations

import errno
import os
import signal
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping, Sequence
    from typing import IO, Any, TypeAlias

    Started: TypeAlias = "Process | subprocess.Popen[bytes]"  # ours, or git's Popen

# subprocess's own values (tests/process/test_forkexec.py holds them equal): a Spec's
# streams mean the same here and to Popen
PIPE = -1
STDOUT = -2
DEVNULL = -3

SEARCHED_ON = (errno.ENOENT, errno.ENOTDIR)  # execvpe's: try the next PATH entry


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
        self._waiting = threading.Lock()
        _refuse_nul(self.args, env)
        theirs: list[int] = []  # the child's ends, closed here once it has them
        ours: list[int] = []  # our ends of its pipes, kept as its stdin/stdout/stderr
        try:
            p2cread, p2cwrite = _stream(stdin, theirs, ours, reading=True)
            c2pread, c2pwrite = _stream(stdout, theirs, ours, reading=False)
            if stderr == STDOUT:
                errread, errwrite = -1, (c2pwrite if c2pwrite != -1 else 1)
            else:
                errread, errwrite = _stream(stderr, theirs, ours, reading=False)
            child = Child(self.args, env, cwd, (p2cread, c2pwrite, errwrite),
                          process_group, start_new_session, restore_signals, close_fds,
                          pass_fds, user, group, extra_groups)
            self.pid = child.start(theirs)
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


def _refuse_nul(args: list[str], env: Mapping[str, str]) -> None:
    """Popen's checks, before any fork: no NUL byte anywhere, no ``=`` in a name."""
    for key, value in env.items():
        if "=" in key:
            raise ValueError("illegal environment variable name")
        if "\0" in key or "\0" in value:
            raise ValueError("embedded null byte")
    if any("\0" in arg for arg in args):
        raise ValueError("embedded null byte")


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


class Child:
    """What the child does between the fork and the exec, and the parent's side of it."""

    def __init__(self, args: list[str], env: Mapping[str, str], cwd: str | None,
                 streams: tuple[int, int, int], process_group: int | None,
                 new_session: bool, restore_signals: bool, close_fds: bool,
                 pass_fds: Sequence[int], uid: int | None, gid: int | None,
                 groups: Sequence[int] | None) -> None:
        self.args, self.env, self.cwd = args, dict(env), cwd
        self.streams = streams
        self.process_group, self.new_session = process_group, new_session
        self.restore_signals, self.close_fds = restore_signals, close_fds
        self.pass_fds = sorted({int(fd) for fd in pass_fds})
        self.uid, self.gid = uid, gid
        self.groups = None if groups is None else list(groups)
        program = args[0]
        self.candidates = [program] if os.path.dirname(program) else [
            os.path.join(directory, program) for directory in os.get_exec_path(env)]

    def start(self, made: list[int]) -> int:
        """Fork; the child's pid once it has exec'd, or the OSError it could not."""
        # Every descriptor the child moves to 0, 1 or 2 must itself be above 2, or one
        # dup2 would overwrite the source of the next (copies go in ``made``).
        self.streams = tuple(_high(fd, made) for fd in self.streams)  # type: ignore[assignment]
        report_read, report_write = os.pipe()
        while report_write < 3:  # (never one of the fds the child's 0, 1 and 2 become)
            low, report_write = report_write, os.dup(report_write)
            os.close(low)
        try:
            try:
                pid = os.fork()
                if pid == 0:
                    self._child(report_write)  # (never returns)
            finally:
                os.close(report_write)
            report = b""
            while len(report) <= 50_000:  # (EOF: the exec closed it, close-on-exec)
                part = os.read(report_read, 50_000)
                if not part:
                    break
                report += part
        finally:
            os.close(report_read)
        if report:
            _reap_quietly(pid)
            raise _exec_error(report, self.args[0], self.cwd)
        return pid

    def _child(self, report: int) -> None:
        where = b""
        try:
            for target, fd in enumerate(self.streams):
                if fd == -1:
                    continue
                os.dup2(fd, target)  # (inheritable: the exec keeps it)
            if self.close_fds:
                _close_all_but([*self.pass_fds, report])
            for fd in self.pass_fds:
                os.set_inheritable(fd, True)
            if self.cwd is not None:
                where = b"noexec"
                os.chdir(self.cwd)
                where = b""
            if self.restore_signals:
                for sig in (signal.SIGPIPE, signal.SIGXFSZ):
                    signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, ())
            if self.new_session:
                os.setsid()
            elif self.process_group is not None:
                os.setpgid(0, self.process_group)
            if self.groups is not None:
                os.setgroups(self.groups)
            if self.gid is not None:
                os.setresgid(self.gid, self.gid, self.gid)
            if self.uid is not None:
                os.setresuid(self.uid, self.uid, self.uid)
            self._exec()
        except OSError as err:
            _say(report, err.errno or 0, where)
        except BaseException:
            _say(report, 0, b"")
        finally:
            os._exit(255)

    def _exec(self) -> None:
        """execvpe's search: the first error that is not "not here" is the one said."""
        kept: OSError | None = None
        last = OSError(errno.ENOENT, os.strerror(errno.ENOENT), self.args[0])
        for path in self.candidates:
            try:
                os.execve(path, self.args, self.env)
            except OSError as err:
                if err.errno not in SEARCHED_ON and kept is None:
                    kept = err
                last = err
        raise kept or last


def _high(fd: int, made: list[int]) -> int:
    """``fd`` itself when it is above 2, else a close-on-exec copy above 2 (closed by the
    caller with the rest of ``made``)."""
    if fd < 0 or fd > 2:
        return fd
    import fcntl  # (only when a standard descriptor of ours was closed: rare)

    copy = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    made.append(copy)
    return copy


def _close_all_but(keep: list[int]) -> None:
    low = 3
    for fd in sorted(keep):
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))


def _say(report: int, number: int, where: bytes) -> None:
    try:
        os.write(report, b"OSError:%x:%s" % (number, where))
    except OSError:
        pass


def _reap_quietly(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _exec_error(report: bytes, program: str, cwd: str | None) -> OSError:
    """The OSError the child reported (``OSError:<hex errno>:<where>``); ``noexec``: it
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


def start(args: Sequence[str], **options: Any) -> Process:
    """A started child."""
    return Process(args, **options)
