"""Stopping what a dead child left behind: a hook's process group, a hook service's
session (what a root session hook left running as root: rootleftovers.py).

The child itself is gone, so there is no Child (and no pidfd from its start) to go by:
only a group or session id, and /proc (procfs) to check each time that the processes
found there are still the ones meant. Nothing is ever signalled on a guess, nor for
another user.
"""

from __future__ import annotations

import functools
import os
import signal
import time
from typing import TYPE_CHECKING

from initd.process.procfs import proc_groups, real_uid, signal_if, start_ticks, stat_fields, uids

if TYPE_CHECKING:
    from collections.abc import Callable

KILL_SETTLE = 1.0  # seconds stop() waits for a KILLed group to be gone (and the stops here)


def stop_leftover_group(pgid: int, leader_started: object, grace: float) -> bool:
    """Stop a hook's process group that the process running it left behind when it died
    (TERM to the group, ``grace``, KILL). Only a group above 1 (group 1 would mean kill(-1):
    everything), only while its leader is alive with the start time recorded (a pid, and
    so a group id, may since have been reused), and only when the leader is this
    process's own user's: a group is never signalled on a guess, nor for someone else.
    Returns True when there was such a group."""
    if pgid <= 1 or not isinstance(leader_started, int) or start_ticks(pgid) != leader_started \
            or real_uid(pgid) != os.getuid():
        return False

    def alive() -> bool:
        return any(pgrp == pgid and state not in "ZX" for state, pgrp in proc_groups())

    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, KILL_SETTLE)):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return True
        deadline = time.monotonic() + wait
        while alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if not alive():
            break
    return True


def _in_session(pid: int, sid: int, uid: int | None) -> bool:
    """(Strict: at the descriptor limit this raises, and spawn.stop_process_session waits for
    one: "cannot look" is never "none left".)"""
    fields = stat_fields(pid, strict=True)
    if fields is None or fields[0] in (b"Z", b"X") or int(fields[3]) != sid:
        return False
    found = uids(pid, strict=True)
    return uid is None or (bool(found) and found[0] == uid)


def _session_members(sid: int, uid: int | None) -> list[int]:
    return [int(name) for name in os.listdir("/proc")
            if name.isdigit() and _in_session(int(name), sid, uid)]


def stop_process_session(sid: int, uid: int | None, grace: float) -> int:
    """Stop what is left of the session ``sid`` (a hook service that died: its hooks, in
    groups of their own, are still in its session): TERM, ``grace``, KILL, to each
    process seen in that session and owned by ``uid``. The session id is the dead
    child's pid, from root's own memory, never from a file. Returns how many processes
    were signalled."""
    if sid <= 1:
        return 0
    return _stop_each(lambda: _session_members(sid, uid),
                      lambda pid: _in_session(pid, sid, uid), grace)


def _stop_each(members: Callable[[], list[int]], still: Callable[[int], bool],
               grace: float) -> int:
    """TERM, ``grace``, KILL to each of ``members()`` (``_signal``)."""
    signalled: set[int] = set()
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, KILL_SETTLE)):
        for pid in members():
            if signal_if(pid, functools.partial(still, pid), sig):
                signalled.add(pid)
        deadline = time.monotonic() + wait
        while members() and time.monotonic() < deadline:
            time.sleep(0.02)
        if not members():
            break
    return len(signalled)
