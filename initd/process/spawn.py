"""Spawning and stopping children: the one module that starts them and waits for them.

Every child (ARCHITECTURE.md, invariant 2) starts in its own process group, with default signal
dispositions and an empty signal mask, an explicit cwd, and stdin from /dev/null unless
told otherwise. We use ``subprocess.Popen`` (vfork, then exec, the steps between in C),
not ``os.posix_spawn``: on this Debian's glibc 2.36 posix_spawn leaves real-time signals
32 and 33 ignored in the child even with ``setsigdef``, and it sets no cwd and no user;
nor ``os.fork`` in Python: the copy of the supervisor's pages and what the child then
touches in them make a hook's start several times Popen's (bench/README.md, row 5).
The caller's own mask must be empty when it spawns (the supervisor unblocks before it
starts anything), because fork+exec inherits it.

Waiting uses a pidfd per child, so a supervisor can wait for a child and for signals in
one ``poll`` (wait_fds) and never waits for "any child" (that reaping is PID 1's alone).

Here: spawn, the running Child, and stop. Beside it: spec.py (the Spec and environment
a child is started with), procfs (what /proc says of a pid) and leftovers (stopping what
a dead child left behind). Their public names stay importable from here: ``proc.X``.
"""

from __future__ import annotations

import errno
import math
import os
import select
import signal
import subprocess
import time
from typing import TYPE_CHECKING

from initd.errors import InitdError, shown
from initd.pid1.log import write_line
from initd.process import limits
from initd.process.execfail import ExecFailed as ExecFailed
from initd.process.execfail import exec_failure
from initd.process.leftovers import KILL_SETTLE as KILL_SETTLE
from initd.process.leftovers import stop_leftover_group as stop_leftover_group
from initd.process.leftovers import stop_process_session as _stop_process_session
from initd.process.procfs import proc_groups
from initd.process.procfs import real_uid as real_uid
from initd.process.procfs import start_ticks as start_ticks
from initd.process.spec import DEVNULL as DEVNULL
from initd.process.spec import INHERIT as INHERIT
from initd.process.spec import PIPE as PIPE
from initd.process.spec import STDOUT as STDOUT
from initd.process.spec import Spec as Spec
from initd.process.spec import environment as environment
from initd.process.users import Account

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

LIMIT_WAIT = 30.0  # seconds a stop of what a session left waits for a descriptor (EMFILE)


def wait_fds(read: Iterable[Any], timeout: float | None, write: int | None = None) -> set[int]:
    """The descriptors (ints, or objects with a fileno) of ``read`` that became readable
    (or hung up), and ``write`` once writable, within ``timeout`` s (None: until one is).
    poll, never select (invariant 13): select raises for a descriptor above 1023, and poll
    makes no descriptor of its own (epoll does), so it works at the limit (EMFILE) too."""
    poller = select.poll()
    for fd in read:
        poller.register(fd, select.POLLIN | select.POLLPRI)
    if write is not None:
        poller.register(write, select.POLLOUT)
    # (milliseconds rounded up: a wait of 0.4 ms must not become a poll that spins)
    return {fd for fd, _ in poller.poll(None if timeout is None else
                                        max(0, math.ceil(timeout * 1000)))}


class Child:
    """A running child: its Popen, process group and pidfd."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.pgid = popen.pid  # process_group=0 made it the leader of its own group
        self.pidfd = os.pidfd_open(popen.pid)
        self.started = time.monotonic()
        self.denied = False  # a signal was refused (EPERM: no CAP_KILL over its uid)

    def fileno(self) -> int:
        """Readable once the child has exited: lets ``poll`` wait for it."""
        return self.pidfd

    def poll(self) -> int | None:
        """The returncode (negative: killed by that signal) once exited, else None."""
        code = self.popen.poll()
        if code is not None and self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1
        return code

    def wait(self, timeout: float | None) -> int | None:
        if self.poll() is None:
            wait_fds([self], timeout)
        return self.poll()

    def signal_group(self, sig: int) -> bool:
        """Signal the child's whole process group; False if nobody is left in it."""
        try:
            os.killpg(self.pgid, sig)
        except ProcessLookupError:
            return False
        except PermissionError:  # --cap-drop KILL, a child of another uid: it is there,
            self.denied = True  # and we cannot signal it (the caller says so, degrades)
        return True

    def group_alive(self) -> bool:
        """Is any member of the group still running? Zombies do not count: they are dead
        and only wait for their reaper, which outside initd may take its time, and
        kill(0) still succeeds on a group of zombies."""
        if not self.signal_group(0):
            return False
        try:
            groups = proc_groups()
        except OSError:  # /proc unreadable (EMFILE): alive, so a stop goes on to KILL
            return True
        return any(pgrp == self.pgid and state not in "ZX" for state, pgrp in groups)


def spawn(spec: Spec) -> Child:
    """Start ``spec``; raise ExecFailed (126/127) when the command cannot be executed."""
    account = spec.account
    if account is not None and (account.uid == os.geteuid() != 0 or _already(account)):
        # Already that user: an unprivileged setgroups would only fail, and a child
        # that changes no credentials is started with vfork (Popen forks for one that
        # does).
        account = None
    try:
        popen = subprocess.Popen(
            limits.wrap(spec.argv, spec.limits),
            env=dict(spec.env),
            cwd=spec.cwd,
            stdin=spec.stdin,
            stdout=spec.stdout,
            stderr=spec.stderr,
            process_group=None if spec.new_session else 0,
            start_new_session=spec.new_session,
            restore_signals=True,
            close_fds=True,
            pass_fds=spec.pass_fds,
            # In the child: setgroups (so no root supplementary group survives), setgid,
            # then setuid; None leaves each as it is.
            user=None if account is None else account.uid,
            group=None if account is None else account.gid,
            extra_groups=None if account is None else list(account.groups),
        )
    except OSError as err:
        raise exec_failure(spec, err) from None
    except ValueError as err:  # a NUL byte in an argument or a variable (Popen checks)
        raise ExecFailed(f"{shown(spec.argv[0])}: cannot be started: {err} in its arguments "
                         "or environment", 126) from None
    try:
        child = Child(popen)
    except OSError as err:  # no pidfd (EMFILE): never a child left running unwatched
        _abandon(popen)
        raise InitdError(f"cannot watch {shown(spec.argv[0])} once started: {err.strerror}"
                         " (stopped it)") from None
    if spec.terminal:
        give_terminal(child)
    return child


def _abandon(popen: subprocess.Popen[bytes]) -> None:
    """A child just started that cannot be watched: killed with its group, reaped."""
    try:
        os.killpg(popen.pid, signal.SIGKILL)  # (its own group, or session: the same id)
        popen.wait()
    except OSError:  # not ours to signal (no CAP_KILL): PID 1's last sweep ends it
        pass
    for stream in (popen.stdin, popen.stdout, popen.stderr):
        if stream is not None:
            stream.close()


def _already(account: Account) -> bool:
    """Does this process have ``account``'s credentials, real, effective and saved, and
    its supplementary groups? (Its primary group counts as in its groups either way: a
    root with no supplementary groups runs a root hook as root.)"""
    return (os.getresuid() == (account.uid,) * 3 and os.getresgid() == (account.gid,) * 3
            and set(os.getgroups()) - {account.gid} == set(account.groups) - {account.gid})


def give_terminal(child: Child, fd: int = 0) -> None:
    """Make the child's group the foreground of the terminal on ``fd`` (tini does this).

    The child runs in its own process group: without this, an interactive CMD under
    ``podman run -it`` is stopped by SIGTTIN at its first read, and Ctrl-C reaches
    initd instead of CMD. Nothing to do when ``fd`` is not our controlling terminal.
    """
    if not os.isatty(fd):
        return
    # A background process may change the foreground group only with SIGTTOU blocked.
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
    try:
        os.tcsetpgrp(fd, child.pgid)
    except OSError:
        return  # a terminal, but not our controlling one (ENOTTY) or another session's
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    # It may have read before it was given the foreground: SIGTTIN stopped it then.
    child.signal_group(signal.SIGCONT)


if TYPE_CHECKING:
    # (what to watch now, fds or objects with one; what to do once one of them is ready)
    Meanwhile = tuple[Callable[[], list[Any]], Callable[[], object]]


def stop(child: Child, sig: int, grace: float, meanwhile: Meanwhile | None = None) -> int:
    """Stop by escalation: ``sig`` to the group, up to ``grace`` seconds, then SIGKILL.

    Waits for the whole group, not just the leader, so a grandchild that ignores ``sig``
    is killed too; it never waits on a pipe, so a grandchild holding one open cannot
    stretch the stop past the deadline. ``meanwhile``: what is watched during the grace
    (the supervisor's signals, still passed on; a control socket whose service has not
    started yet). Returns the leader's returncode.
    """
    deadline = time.monotonic() + grace
    child.signal_group(sig)
    while True:
        code = child.poll()
        if code is not None and not child.group_alive():
            return code
        left = deadline - time.monotonic()
        if left <= 0:
            break
        if code is None and meanwhile is not None:
            watch, act = meanwhile
            if wait_fds([child, *watch()], min(left, 0.1)) - {child.fileno()}:
                act()
        elif code is None:
            child.wait(min(left, 0.1))
        else:
            if meanwhile is not None:
                meanwhile[1]()
            time.sleep(min(left, 0.02))  # leader gone, group members still exiting
    child.signal_group(signal.SIGKILL)
    if child.denied:  # it may outlive us: never wait for it without end (PID 1, exiting,
        settled = child.wait(KILL_SETTLE)  # takes the namespace down with it)
        if settled is None:
            return -signal.SIGKILL
        code = settled
    else:
        code = child.popen.wait()
    child.poll()  # closes the pidfd
    # SIGKILL is delivered, not instant: let the group's last members finish dying, so
    # "stopped" means dead (bounded: a process in uninterruptible sleep may take longer).
    until = time.monotonic() + KILL_SETTLE
    while child.group_alive() and time.monotonic() < until:
        time.sleep(0.005)
    return code


def stop_process_session(sid: int, uid: int | None, grace: float) -> int:
    """leftovers.stop_process_session, which lists /proc: at the descriptor limit (EMFILE, ENFILE:
    a flood on the probe port under a small limit) it waits for one, up to LIMIT_WAIT,
    rather than leave the session's processes running or raise in root's worker."""
    deadline = time.monotonic() + LIMIT_WAIT
    while True:
        try:
            return _stop_process_session(sid, uid, grace)
        except OSError as err:
            if err.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            if time.monotonic() >= deadline:
                write_line(f"initd: cannot stop what session {sid} left: {err.strerror}")
                return 0
        time.sleep(0.1)


def exit_status(returncode: int) -> int:
    """A Popen returncode as a shell reports it: N, or 128+S when killed by signal S."""
    return 128 - returncode if returncode < 0 else returncode
