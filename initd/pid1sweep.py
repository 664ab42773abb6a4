"""PID 1's last act: once the supervisor has exited, end whatever is still running.

The supervisor has already stopped the agent with its full --grace; what is left here
is stragglers and orphans. TERM, a short grace, then KILL, bounded, so that a process
initd may not signal never keeps the container alive. PID-1 tier: ``os``, ``signal``
and ``time`` only, and one pass over /proc instead of psutil.
"""

from __future__ import annotations

import os
import signal
import time

from initd.pid1log import INFO, WARN, Log
from initd.pid1signals import WAKE_INTERVAL

# After the supervisor exits: TERM to everything left, this long, then KILL. The
# supervisor has already given the agent its full --grace; this is for stragglers.
SWEEP_GRACE = 2.0


def sweep(is_pid1: bool, grace: float, log: Log) -> None:
    """TERM whatever is left, wait up to ``grace``, then KILL until nothing is left.

    As PID 1 "everything" is the namespace (``kill(-1)``). As a subreaper it is only our
    own descendants: ``kill(-1)`` outside a PID namespace would hit the whole machine.
    """
    if _all_reaped(0):
        return
    _signal_rest(is_pid1, signal.SIGTERM)
    log(INFO, "sweeping leftover processes", signal="SIGTERM", grace=grace)
    if _all_reaped(grace):
        return
    log(INFO, "sweep grace over", signal="SIGKILL")
    # Repeat: a process may fork between our look at /proc and the signal. Bounded: what
    # we may not kill (no CAP_KILL over another uid) must not keep the container alive;
    # as PID 1 our own exit makes the kernel kill everything in the namespace.
    deadline = time.monotonic() + grace
    while True:
        _signal_rest(is_pid1, signal.SIGKILL)
        if _all_reaped(0.1):
            return
        if time.monotonic() >= deadline:
            log(WARN, "processes initd may not signal are left (no CAP_KILL?): exiting "
                "anyway" + (", which ends them" if is_pid1 else ""))
            return


def _all_reaped(timeout: float) -> bool:
    """Reap until no child is left (True) or ``timeout`` passes (False).

    As PID 1 or a subreaper, no child left means no descendant left: an orphan is
    re-parented to us before it can outlive its parent.
    """
    deadline = time.monotonic() + timeout
    while True:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == 0:
                break
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
