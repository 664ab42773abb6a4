"""The Stop loop, bounded. A Stop (or SubagentStop) hook that blocks keeps the agent going;
one that always blocks would keep it going for ever. So the engine counts the blocks in a
row, per event: a Claude Code hook is told ``stop_hook_active: true`` on its stdin when
the previous one was blocked (Claude Code's field, unless the agent's payload says it),
and once CAP Stops in a row were blocked, no hook of any format blocks the next one: it
happens, and each result that asked to block says why not. A Stop that is not blocked,
and a user prompt (``user_prompt_submit``), start the count again.

The counts are kept in memory and in ``stop-loop.json`` in the session's events directory,
so a restarted hook service goes on counting; what is not a count there reads as 0.
"""

from __future__ import annotations

import threading
from typing import Any

from initd.agentfs import Place
from initd.log import Logger
from initd.statefile import StateFile

CAP = 3  # blocked Stops in a row; the next one is not blocked
EVENTS = ("stop", "subagent_stop")
RESET_BY = "user_prompt_submit"
FILE = "stop-loop.json"
FILE_LIMIT = 2**12


class StopLoop:
    def __init__(self, state_dir: str, log: Logger, cap: int = CAP) -> None:
        self.file = StateFile(Place(state_dir), FILE, dict, limit=FILE_LIMIT)
        self.log = log
        self.cap = cap
        self.lock = threading.Lock()
        self.counts = self._kept()

    def _kept(self) -> dict[str, int]:
        try:
            data: dict[str, Any] = self.file.read()
        except (OSError, ValueError) as err:
            self.log.warning("stop loop count not read: starting from 0", error=str(err))
            data = {}
        return {event: _count(data.get(event)) for event in EVENTS}

    def blocked_before(self, event: str) -> int:
        """The ``event``s blocked in a row just before this one."""
        with self.lock:
            return self.counts.get(event, 0)

    def why_not(self, event: str) -> str | None:
        """Why a hook may not block this ``event`` (the cap is reached), or None."""
        count = self.blocked_before(event)
        if event not in EVENTS or count < self.cap:
            return None
        return (f"not blocked: {count} {event} events in a row were blocked (the loop cap is "
                f"{self.cap}), so this one goes through")

    def after(self, event: str, blocked: bool) -> None:
        """Count ``event``'s outcome: a blocked Stop adds one, any other starts again; a
        user prompt starts both again."""
        with self.lock:
            if event == RESET_BY:
                changed = {e: 0 for e in EVENTS}
            elif event in EVENTS:
                changed = {event: self.counts[event] + 1 if blocked else 0}
            else:
                return
            if all(self.counts[e] == n for e, n in changed.items()):
                return
            self.counts.update(changed)
            counts = dict(self.counts)
            try:
                self.file.write(counts)
            except OSError as err:  # kept in memory: only a restart forgets it
                self.log.warning("stop loop count not kept", error=str(err))


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else 0
