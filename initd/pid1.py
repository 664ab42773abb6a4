"""The reaper tier: the process that is PID 1 for the container's whole life.

Standard library only, and small: this process lives as long as the container. It has
exactly one child, the supervisor (forked, so heavy imports happen only over there), and
it is the only process in initd that calls ``waitpid(-1)``, here and in its last sweep
(DESIGN.md invariant 1: a ``waitpid(-1)`` loop beside ``subprocess`` steals exit
statuses, and CPython then reports a failed child as exit 0).

The loop is tini's and dumb-init's: block the signals we handle, wait for one with
``sigtimedwait``, then reap every exited child until none is left, on every wake-up and
never capped (supervisord's cap of 100 per pass left thousands of zombies).

Here: the fork, the forwarding and reaping loop, and the exit code. Beside it, in the
same tier and as small: pid1signals (which signals, and the dispositions on each side of
the fork), pid1sweep (what is left once the supervisor has exited), and pid1log (its few
lines). Their public names stay importable from here.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable

from initd.errors import InitdError
from initd.pid1log import DEBUG as DEBUG
from initd.pid1log import INFO as INFO
from initd.pid1log import WARN as WARN
from initd.pid1log import Log as Log
from initd.pid1log import write_line as write_line
from initd.pid1signals import FORWARDED as FORWARDED
from initd.pid1signals import JOB_CONTROL as JOB_CONTROL
from initd.pid1signals import RT_SIGACTION as RT_SIGACTION
from initd.pid1signals import WAITED as WAITED
from initd.pid1signals import WAKE_INTERVAL as WAKE_INTERVAL
from initd.pid1signals import default_dispositions, take_signals
from initd.pid1sweep import SWEEP_GRACE as SWEEP_GRACE
from initd.pid1sweep import descendants as descendants
from initd.pid1sweep import sweep

PR_SET_CHILD_SUBREAPER = 36


def run(supervisor: Callable[[], int], log: Log | None = None,
        sweep_grace: float = SWEEP_GRACE) -> int:
    """Fork ``supervisor``, reap and forward until it exits, sweep, return its exit code.

    ``supervisor`` runs in the child with default signal dispositions but with the
    forwarded signals still blocked: it must install its handlers and then unblock
    (``sigchan.SignalChannel``), so a signal arriving while it imports is delayed, not fatal.
    """
    log = log or Log()
    is_pid1 = os.getpid() == 1
    if not is_pid1:
        become_subreaper(log)
    take_signals()
    try:
        pid = os.fork()
    except OSError as err:
        raise InitdError(f"cannot fork the supervisor: {err.strerror}") from err
    if pid == 0:
        os._exit(_child(supervisor))
    # Like dumb-init: PID 1 holds no directory busy (the supervisor keeps the cwd).
    os.chdir("/")
    status = _reap_until(pid, log)
    code = exit_code(status)
    if os.WIFSIGNALED(status):  # (kill -9 by someone, the OOM killer): say so, once
        name = _signal_name(os.WTERMSIG(status))
        write_line(f"initd: initd's own supervisor was killed by {name}: stopping "
                   f"everything it ran; exit {code}")
    log(INFO, "supervisor exited", code=code)
    sweep(is_pid1, sweep_grace, log)
    return code


def become_subreaper(log: Log) -> bool:
    """Adopt orphaned descendants like PID 1 would (catatonit does this automatically)."""
    import ctypes  # only needed off PID 1; keeps PID 1's start-up lean

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
        log(DEBUG, "not PID 1: running as child subreaper", pid=os.getpid())
        return True
    log(WARN, "not PID 1 and PR_SET_CHILD_SUBREAPER failed: orphans will not be reaped",
        errno=ctypes.get_errno())
    return False


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def exit_code(status: int) -> int:
    """A wait status as a shell would report it: N, or 128+S for a signal."""
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _child(supervisor: Callable[[], int]) -> int:
    code = 125
    try:
        default_dispositions()
        code = supervisor()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 125)
    except BaseException:
        import traceback

        traceback.print_exc()
        write_line("initd: internal error in the supervisor (traceback above)")
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass  # a closed stdout must not turn a good exit code into a crash
    return code


def _reap_until(supervisor: int, log: Log) -> int:
    """Forward signals and reap everything until the supervisor itself has exited."""
    while True:
        info = signal.sigtimedwait(WAITED, WAKE_INTERVAL)
        if info is not None and info.si_signo != signal.SIGCHLD:
            log(DEBUG, "forwarding signal", signal=signal.Signals(info.si_signo).name)
            try:
                os.kill(supervisor, info.si_signo)
            except ProcessLookupError:
                pass  # it has just exited; the reap below will see it
        # SIGCHLDs coalesce: look for the supervisor inside the reap loop, on every wake,
        # or we could wait forever for a notification that was merged away (catatonit#4).
        status = _reap(supervisor, log)
        if status is not None:
            return status


def _reap(watch: int, log: Log) -> int | None:
    """Reap every exited child; return the wait status of ``watch`` if it was among them."""
    found = None
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return found
        if pid == 0:
            return found
        if pid == watch:
            found = status
        else:
            log(DEBUG, "reaped", pid=pid, code=exit_code(status))
