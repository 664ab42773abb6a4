"""A service's output, root's side: its log directory made, its logger started, its pipe.

s6-log's model: one logger per service for initd's whole life, ``initd svlog``
(process/svlog.py) run as the service's user, never root's, which writes
``<log_dir>/<name>/current`` and its rotations and passes each line to initd's stderr.
Root never reads the service's bytes: what a service writes costs root nothing
(invariant 6 and the threat model: root's CPU is never proportional to what an untrusted
process writes), and its files are written with its own user's rights, so a link, FIFO
or file planted in its directory reaches only what that user may reach.

Root makes the directories (invariant 8, through agentfs): ``<log_dir>`` root's, 0755,
refused when anyone else may write it; ``<log_dir>/<name>`` never through a link, the
service user's, 0750. Root keeps both ends of the pipe: the write end, given to each
start of the service (its restarts log to the same logger), and the read end, which it
never reads: a logger that died (killed by the service's user, whose process it is) is
started again on the same pipe, so a service still running meanwhile waits at worst on
a full pipe, never gets SIGPIPE. A restart comes at most every RESTART_GAP seconds.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import sys
import time
from typing import TYPE_CHECKING

from initd.errors import InitdError
from initd.process import spawn
from initd.state import agentfs

if TYPE_CHECKING:
    from initd.config.log import Logger
    from initd.process.users import Account

PIPE_SIZE = 1 << 20  # the pipe's capacity: Linux's default pipe-max-size, the logger's read
RESTART_GAP = 1.0  # seconds between two starts of a logger
DIR_MODE = 0o750


class ServiceLog:
    """The logger of the service ``name``, running as ``account`` (None: initd's own
    user), writing under ``log_dir``; its lines on initd's stderr (or ``stderr``, a
    descriptor) as JSON when ``json``. ``logger``: initd's log, for root's own lines."""

    def __init__(self, name: str, account: Account | None, log_dir: str, max_bytes: int,
                 backups: int, json: bool, logger: Logger | None = None,
                 stderr: int | None = None) -> None:
        self.name = name
        self.account = account
        self.log_dir = log_dir
        self.max_bytes = max_bytes
        self.backups = backups
        self.json = json
        self.logger = logger
        self.stderr = stderr
        self.directory: str | None = None  # <log_dir>/<name>, once prepared
        self.child: spawn.Child | None = None
        self.read_end = self.write_end = -1
        self.started = 0.0
        self.code: int | None = None  # the last logger's exit status, once it ended

    def prepare(self) -> None:
        """As root: ``<log_dir>`` (made root's 0755 if missing; refused when a link only
        someone else could have made leads there, when anyone but root, or initd's own
        user when it is not root, owns it or may write it, or a directory above it) and
        ``<log_dir>/<name>``
        (never through a link, the service user's, 0750). InitdError, naming the path,
        when either is refused or cannot be made: the logger then runs without files."""
        owner = None if self.account is None else (self.account.uid, self.account.gid)
        place = agentfs.Place.named(self.log_dir)
        try:
            if os.geteuid() == 0 and place.parts and \
                    os.path.lexists(os.path.join(place.base, place.parts[0])):
                raise agentfs.Unsafe(errno.EPERM, f"{self.log_dir}: {place.base}/"
                                     f"{place.parts[0]} may be changed by someone other "
                                     "than root: not used (nothing made there)")
            with place.open(create=True) as top:
                _check_top(top, self.log_dir)
                with agentfs.below(top, self.name, owner, DIR_MODE) as mine:
                    self.directory = mine.path
        except OSError as err:
            raise InitdError(f"service {self.name}: its log directory: "
                             f"{err if isinstance(err, agentfs.Unsafe) else _said(err)}"
                             ) from None
        refused = [path for path in agentfs.refused_chowns() if path == self.directory]
        if refused and self.logger is not None:
            self.logger.warning("service log directory not given to its user (no "
                                "CAP_CHOWN): its log files are not kept", service=self.name,
                                path=refused[0])

    def start(self) -> None:
        """The pipe (both ends kept) and the logger on it."""
        if self.read_end < 0:
            self.read_end, self.write_end = os.pipe2(os.O_CLOEXEC)
            try:
                fcntl.fcntl(self.write_end, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
            except OSError:
                pass  # (a smaller pipe: only more reads for the logger)
        self._spawn()

    def output_fd(self) -> int:
        """The write end, for the service's stdout and stderr (a logger that died is
        started again first, if it may be by now)."""
        if self.read_end < 0:
            self.start()
        else:
            self.revive()
        return self.write_end

    def fileno(self) -> int:
        """The logger's pidfd, readable once it has exited (then call ``revive``);
        -1 when none runs."""
        return -1 if self.child is None else self.child.fileno()

    def revive(self) -> bool:
        """Start the logger again if it has exited and the last start was RESTART_GAP
        seconds ago or more (else ``revive_in`` says when). Whether a logger runs now."""
        if self.child is not None:
            code = self.child.poll()
            if code is None:
                return True
            self.code, self.child = code, None
            if self.logger is not None:
                self.logger.warning("service logger exited; started again", service=self.name,
                                    code=code)
        if self.read_end < 0 or self.revive_in() != 0.0:
            return False
        self._spawn()
        return self.child is not None

    def revive_in(self) -> float | None:
        """Seconds until ``revive`` would start a logger that died (0: now); None while
        one runs, or before ``start``. For the supervisor's poll timeout: a service still
        writing waits on the pipe until then."""
        if self.read_end < 0 or (self.child is not None and self.child.poll() is None):
            return None
        return max(0.0, self.started + RESTART_GAP - time.monotonic())

    def close(self, deadline: float) -> int | None:
        """Root's ends closed: the logger reads to the pipe's end (the service's last
        lines) and exits; waited for until ``deadline`` (time.monotonic()), then
        killed (a process the service left still holds the pipe). Its exit status,
        None when none ran."""
        for fd in (self.write_end, self.read_end):
            if fd >= 0:
                os.close(fd)
        self.read_end = self.write_end = -1
        child, self.child = self.child, None
        if child is None:
            return self.code
        code = child.wait(max(0.0, deadline - time.monotonic()))
        if code is None:
            code = spawn.stop(child, signal.SIGKILL, 0.0)
        self.code = code
        return code

    def argv(self) -> tuple[str, ...]:
        """How the logger is run: isolated (``python -I``, from /) as the hook service
        is, so nothing of the service user's (a PYTHONPATH, a sitecustomize) runs."""
        argv = [sys.executable, "-I", "-m", "initd", "svlog", "--name", self.name,
                "--max-bytes", str(self.max_bytes), "--backups", str(self.backups)]
        if self.directory is not None:
            argv += ["--dir", self.directory]
        if self.json:
            argv.append("--json")
        return tuple(argv)

    def _spawn(self) -> None:
        """The logger, as the service's user, in a process session of its own, its
        stdin the pipe, its stderr initd's, an environment of its user's login
        variables alone (no secret of initd's environment)."""
        self.started = time.monotonic()
        spec = spawn.Spec(argv=self.argv(), env=spawn.environment(
            {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}, self.account), cwd="/",
            account=self.account, stdin=self.read_end, stdout=spawn.DEVNULL,
            stderr=self.stderr, new_session=True)
        try:
            self.child = spawn.spawn(spec)
        except (InitdError, OSError) as err:
            self.child = None
            if self.logger is not None:
                self.logger.warning("service logger not started", service=self.name,
                                    error=str(err))


def _check_top(top: agentfs.Dir, log_dir: str) -> None:
    """``<log_dir>``: root's (or, initd not root, initd's own user's), no one else may
    write it, and (initd root) every directory on its path is root's and may be changed
    by root alone: no name in it can be planted, nor it swapped for another, so the path
    the logger is given leads where root made it."""
    info = os.fstat(top.fd)
    me = os.geteuid()
    if info.st_uid not in (0, me):
        raise agentfs.Unsafe(errno.EPERM, f"{top.path} belongs to uid {info.st_uid}, not "
                                          f"to root{'' if me == 0 else f' or uid {me}'}: "
                                          "not used")
    if info.st_mode & 0o022:
        raise agentfs.Unsafe(errno.EPERM, f"{top.path} may be written by others (mode "
                                          f"{info.st_mode & 0o7777:o}): not used")
    if me == 0 and agentfs.Place.named(log_dir).parts:
        raise agentfs.Unsafe(errno.EPERM, f"{top.path}: a directory on its way from / may "
                                          "be changed by someone other than root: not used")


def _said(err: OSError) -> str:
    where = f"{err.filename}: " if err.filename else ""
    return f"{where}{err.strerror or err}"
