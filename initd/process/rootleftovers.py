"""What a workspace's root session hook left running with root's powers, found and
stopped before the agent starts (ARCHITECTURE.md, invariant 11).

A hook's children re-parent to initd's reaper (PID 1, or its subreaper) when the hook
ends, so what it left is whatever descends from the reaper but not from the supervisor.
Of those, a process is root's when uid 0 is among its real, effective, saved or
file-system uids, or when it holds any capability (a daemon may keep root's powers under
another uid: keep-caps and ambient capabilities); one that dropped to another user for
good is not, and stays.

The tree is read from each process's ``children`` files, and a scan is consistent when
the reaper's children were the same before and after it (a process that forked and
exited meanwhile left its child to the reaper, unseen). A daemon may fork its way out
while it is being stopped: after a graceful TERM, each one seen is frozen with SIGSTOP (a
stopped process cannot fork), until consistent scans find nothing new, and then killed.
One that hops to a new pid faster than a scan (fork, and the parent exits, thousands of
times a second) is never caught that way: when the freeze does not settle within
FREEZE_LIMIT and initd is PID 1 of its own PID namespace, the whole namespace is stopped
at once (kill(-1, SIGSTOP): every process but PID 1 and the supervisor, atomically),
the root leftovers are killed, and everything else is continued. (As a subreaper on a
host, that would stop the host: the sweep then says what it could not stop.) At the
descriptor limit a scan waits for a descriptor (LIMIT_WAIT), then raises: "cannot look"
is never "nothing left".
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

from initd.process.procfs import (
    LIMITS,
    children,
    children_listed,
    command,
    parents,
    privileged,
    signal_if,
    stat_fields,
)

LIMIT_WAIT = 30.0  # seconds a scan waits for a descriptor (EMFILE, ENFILE)
QUIET = 3  # scans in a row that find nothing new before the frozen are killed
FREEZE_LIMIT = 2.0  # seconds of freezing one by one; then the namespace at once, as PID 1
KILL_WAIT = 1.0  # seconds for the killed to be gone, rescanning

Found = dict[int, int]  # pid: start ticks (a pid alone may be reused)


def root_leftovers(reaper: int, me: int) -> Found:
    """What descends from ``reaper`` but not from ``me``, with root's powers (above)."""
    return _scan(reaper, me)[0]


def _scan(reaper: int, me: int) -> tuple[Found, bool]:
    """(what was found, whether the reaper's children were the same before and after:
    a process that forked and exited meanwhile left its child to the reaper, unseen)."""
    deadline = time.monotonic() + LIMIT_WAIT
    while True:
        try:
            kids = _kids()
            before = sorted(kids(reaper))
            # the supervisor's own children too: a root hook's clone(CLONE_PARENT) makes
            # one, and nothing of initd's own is a child of it in the session phase
            found = _tree([*before, *kids(me)], me, kids)
            return found, sorted(_kids()(reaper)) == before
        except OSError as err:
            if err.errno not in LIMITS or time.monotonic() >= deadline:
                raise
        time.sleep(0.1)


def _kids() -> Callable[[int], list[int]]:
    """A process's children: from its children files, else (a kernel without them)
    from one listing of every process's parent. Never "none" for "cannot tell"."""
    if children_listed():
        return children
    table: dict[int, list[int]] = {}
    for pid, (ppid, _) in parents().items():
        table.setdefault(ppid, []).append(pid)
    return lambda pid: table.get(pid, [])


def stop_root_leftovers(reaper: int, me: int, spared: Found,
                      grace: float) -> dict[int, str]:
    """Stop every root leftover not in ``spared``: TERM and ``grace`` (what appears
    meanwhile gets TERM too), then freeze and KILL. Returns each one seen, with its
    command line as it was when first seen."""
    seen: dict[int, str] = {}

    def members() -> tuple[Found, bool]:
        found, consistent = _scan(reaper, me)
        now = {pid: ticks for pid, ticks in found.items() if spared.get(pid) != ticks}
        for pid in now.keys() - seen.keys():
            seen[pid] = command(pid)
        return now, consistent

    deadline = time.monotonic() + grace
    signalled: set[int] = set()
    while time.monotonic() < deadline:
        now, consistent = members()
        if not now and consistent:
            break  # (gone, or never there: the freeze below makes sure)
        for pid in now.keys() - signalled:
            _send(pid, now[pid], signal.SIGTERM)
        signalled |= now.keys()
        time.sleep(0.02)
    frozen, settled = _freeze(members)
    if not settled and reaper == 1:
        frozen, settled = _stop_the_world(members)
    deadline = time.monotonic() + KILL_WAIT
    while frozen:
        for pid, ticks in frozen.items():
            _send(pid, ticks, signal.SIGKILL)
        if time.monotonic() >= deadline:
            break
        time.sleep(0.02)
        frozen, _ = _freeze(members)
    return seen


def _stop_the_world(members: Callable[[], tuple[Found, bool]]) -> tuple[Found, bool]:
    """Every process of this PID namespace but PID 1 and us, stopped in one call (the
    kernel walks its process list under a lock fork takes too: nothing escapes); the
    root leftovers then killed while nothing can fork; the rest continued."""
    stopped = {pid for pid, (_, state) in parents().items() if state in "tT"}
    os.kill(-1, signal.SIGSTOP)
    try:
        frozen, consistent = members()
        for pid, ticks in frozen.items():
            _send(pid, ticks, signal.SIGKILL)
        return frozen, consistent
    finally:
        _continue(stopped)


def _continue(stopped: set[int]) -> None:
    """SIGCONT to what the world's stop stopped, not to what was stopped before (a
    debugger's tracee, job control's); everything stands still, so the list holds. At
    the descriptor limit, everything: never a container left stopped."""
    try:
        everyone = parents().keys()
    except OSError:
        os.kill(-1, signal.SIGCONT)
        return
    for pid in everyone - stopped - {1, os.getpid()}:
        try:
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass


def _freeze(members: Callable[[], tuple[Found, bool]]) -> tuple[Found, bool]:
    """SIGSTOP to each member, scanning again until QUIET consistent scans in a row find
    none not stopped yet: then nothing of theirs can fork any more. Returns those alive
    at the last scan, and whether it settled so within FREEZE_LIMIT."""
    frozen: Found = {}
    quiet = 0
    deadline = time.monotonic() + FREEZE_LIMIT
    while quiet < QUIET and time.monotonic() < deadline:
        now, consistent = members()
        new = {pid: ticks for pid, ticks in now.items() if frozen.get(pid) != ticks}
        sent = {pid: ticks for pid, ticks in new.items()
                if _send(pid, ticks, signal.SIGSTOP)}  # (not sent: new again next round)
        frozen = {pid: ticks for pid, ticks in now.items()
                  if frozen.get(pid) == ticks or pid in sent}
        quiet = quiet + 1 if not new and consistent else 0
        time.sleep(0.005)
    return frozen, quiet >= QUIET


def _tree(top: list[int], me: int, kids: Callable[[int], list[int]]) -> Found:
    found: Found = {}
    todo = [pid for pid in top if pid != me]
    seen = set(todo)
    while todo:
        pid = todo.pop()
        ticks = _ticks(pid)
        if ticks is not None and privileged(pid):
            found[pid] = ticks
        for child in kids(pid):
            if child not in seen and child != me:
                seen.add(child)
                todo.append(child)
    return found


def _ticks(pid: int) -> int | None:
    fields = stat_fields(pid, strict=True)
    if fields is None or fields[0] in (b"Z", b"X"):
        return None
    return int(fields[19])  # field 22, starttime


def _send(pid: int, ticks: int, sig: int) -> bool:
    """``sig`` to ``pid`` while it is still the process seen (its start ticks)."""
    return signal_if(pid, lambda: _ticks(pid) == ticks, sig)
