"""The reaper tier: the process that is PID 1 for the container's whole life.

Standard library only, and small: this process lives as long as the container. It has
exactly one child, the supervisor (forked, so heavy imports happen only over there), and
it is the only process in initd that calls ``waitpid(-1)``, here and in its last sweep
(ARCHITECTURE.md, invariant 1: a ``waitpid(-1)`` loop beside ``subprocess`` steals exit
statuses, and CPython then reports a failed child as exit 0).

The loop is tini's and dumb-init's: block the signals we handle, wait for one with
``sigtimedwait``, then reap every exited child until none is left, on every wake-up and
never capped (supervisord's cap of 100 per pass left thousands of zombies).

Here: the fork, the forwarding and reaping loop, the exit code, and the last sweep of
whatever is left once the supervisor has exited. Beside it, in the same tier and as
small: signals.py (which signals, and the dispositions on each side of the fork) and
log.py (its few lines).
"""

from __future__ import annotations

import os
import signal
import sys
import time

from initd.errors import InitdError
from initd.pid1.log import DEBUG, INFO, WARN, Log, write_line
from initd.pid1.signals import (
    WAITED,
    WAKE_INTERVAL,
    default_dispositions,
    signal_name,
    take_signals,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from initd.pid1.reaped import Reaped

PR_SET_CHILD_SUBREAPER = 36

# After the supervisor exits: TERM to everything left, this long, then KILL. The
# supervisor has already given the agent its full --grace; this is for stragglers.
SWEEP_GRACE = 2.0


def run(supervisor: Callable[[], int], log: Log | None = None,
        sweep_grace: float = SWEEP_GRACE, reaps: Reaped | None = None) -> int:
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
    status = _reap_until(pid, log, reaps)
    code = exit_code(status)
    if os.WIFSIGNALED(status):  # (kill -9 by someone, the OOM killer): say so, once
        name = signal_name(os.WTERMSIG(status))
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


def _reap_until(supervisor: int, log: Log, reaps: Reaped | None = None) -> int:
    """Forward signals and reap everything until the supervisor itself has exited."""
    while True:
        info = signal.sigtimedwait(WAITED, WAKE_INTERVAL)
        if info is not None and info.si_signo != signal.SIGCHLD:
            log(DEBUG, "forwarding signal", signal=signal_name(info.si_signo))
            try:
                os.kill(supervisor, info.si_signo)
            except ProcessLookupError:
                pass  # it has just exited; the reap below will see it
        # SIGCHLDs coalesce: look for the supervisor inside the reap loop, on every wake,
        # or we could wait forever for a notification that was merged away (catatonit#4).
        status, _ = _reap(log, supervisor, reaps)
        if status is not None:
            return status


def _reap(log: Log, watch: int = 0, reaps: Reaped | None = None
          ) -> tuple[int | None, bool]:
    """Reap every exited child: initd's one ``waitpid(-1)`` loop, for the loop above and
    the sweep below. Returns the wait status of ``watch`` if it was among them, and
    whether no child is left at all; adds how many others there were to ``reaps`` (once
    a pass)."""
    found = None
    reaped = 0
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            pid, none_left = 0, True
        else:
            none_left = False
        if pid == 0:
            if reaped and reaps is not None:
                reaps.add(reaped)
            return found, none_left
        if pid == watch:
            found = status
        else:
            reaped += 1
            log(DEBUG, "reaped", pid=pid, code=exit_code(status))


def sweep(is_pid1: bool, grace: float, log: Log) -> None:
    """TERM whatever is left, wait up to ``grace``, then KILL until nothing is left.

    As PID 1 "everything" is the namespace (``kill(-1)``). As a subreaper it is only our
    own descendants: ``kill(-1)`` outside a PID namespace would hit the whole machine.
    """
    if _all_reaped(0, log):
        return
    _signal_rest(is_pid1, signal.SIGTERM)
    log(INFO, "sweeping leftover processes", signal="SIGTERM", grace=grace)
    if _all_reaped(grace, log):
        return
    log(INFO, "sweep grace over", signal="SIGKILL")
    # Repeat: a process may fork between our look at /proc and the signal. Bounded: what
    # we may not kill (no CAP_KILL over another uid) must not keep the container alive;
    # as PID 1 our own exit makes the kernel kill everything in the namespace.
    deadline = time.monotonic() + grace
    while True:
        _signal_rest(is_pid1, signal.SIGKILL)
        if _all_reaped(0.1, log):
            return
        if time.monotonic() >= deadline:
            log(WARN, "processes initd may not signal are left (no CAP_KILL?): exiting "
                "anyway" + (", which ends them" if is_pid1 else ""))
            return


def _all_reaped(timeout: float, log: Log) -> bool:
    """Reap until no child is left (True) or ``timeout`` passes (False).

    As PID 1 or a subreaper, no child left means no descendant left: an orphan is
    re-parented to us before it can outlive its parent.
    """
    deadline = time.monotonic() + timeout
    while True:
        if _reap(log)[1]:
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        signal.sigtimedwait({signal.SIGCHLD}, min(left, WAKE_INTERVAL))


def _signal_rest(is_pid1: bool, sig: int) -> None:
    targets = [-1] if is_pid1 else descendants(os.getpid())
    for pid in targets:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass  # already gone (or, for -1, nothing left to signal)
        except PermissionError:
            pass  # not ours to signal (no CAP_KILL): the bounded sweep says so


def descendants(root: int) -> list[int]:
    """Every live descendant of ``root``, from one pass over /proc (no psutil in PID 1)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # exited while we looked
        # The command name may contain spaces and parentheses: split after the last ')'.
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found
