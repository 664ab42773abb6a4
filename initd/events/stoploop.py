"""The Stop loop, bounded. A Stop (or SubagentStop) hook that blocks keeps the agent going;
one that always blocks would keep it going for ever. So the engine counts the blocks in a
row, per event: a Claude Code hook is told ``stop_hook_active: true`` on its stdin when
the previous one was blocked (Claude Code's field, unless the agent's payload says it),
and once CAP Stops in a row were blocked, no hook of any format blocks the next one: it
happens, and each result that asked to block says why not. A Stop that is not blocked,
and a user prompt (``user_prompt_submit``), start the count again.

CAP is Claude Code's own. Its hooks reference (https://code.claude.com/docs/en/hooks, the
Stop hook) reads: "Claude Code overrides the hook and ends the turn after 8 consecutive
blocks" (the cap came with Claude Code 2.1.143, and ``CLAUDE_CODE_STOP_HOOK_BLOCK_CAP``
changes it there: anthropics/claude-code#59583, #85547). Older revisions of the
reference left the loop to ``stop_hook_active`` alone. A cap below Claude Code's would
let through a Stop that the user's own Stop hook is still entitled to block.

The counts are steps of the session's ledger (hooks/ledger.py, ``stop-loop.steps`` in
the session's events directory): each Stop's outcome and the counts it leaves are one
line, named by the event's request (its journal entry). So a restarted hook service goes
on counting, and a Stop sent again after a kill -9 (initd emit's resend) is counted once:
it reads the count as it was before it, and adds nothing the second time.
"""

from __future__ import annotations

from typing import Any

from initd.config.log import Logger
from initd.hooks.ledger import Ledger, count
from initd.state.agentfs import Place
from initd.state.journal import Entry

CAP = 8  # blocked Stops in a row; the next one is not blocked (Claude Code's cap)
EVENTS = ("stop", "subagent_stop")
RESET_BY = "user_prompt_submit"
FILE = "stop-loop.steps"
LIMIT = 10_000  # a count as the ledger may say it (the agent's): past the cap is the cap


class StopLoop:
    def __init__(self, state_dir: str, log: Logger, cap: int = CAP) -> None:
        self.steps = Ledger(Place(state_dir), FILE, log.warning)
        self.cap = cap

    def blocked_before(self, event: str, journal: Entry | None = None) -> int:
        """The ``event``s blocked in a row just before this one (before its first delivery,
        for an event sent again with its ``journal``)."""
        if event not in EVENTS:
            return 0
        return count(self.steps.before(journal, event).get(event), LIMIT)

    def why_not(self, event: str, journal: Entry | None = None) -> str | None:
        """Why a hook may not block this ``event`` (the cap is reached), or None."""
        blocked = self.blocked_before(event, journal)
        if event not in EVENTS or blocked < self.cap:
            return None
        return (f"not blocked: {blocked} {event} events in a row were blocked (the loop cap "
                f"is {self.cap}), so this one goes through")

    def after(self, event: str, blocked: bool, journal: Entry | None = None) -> None:
        """Count ``event``'s outcome, once per request: a blocked Stop adds one, any other
        starts again; a user prompt starts both again."""
        if event != RESET_BY and event not in EVENTS:
            return

        def decide(counts: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
            now = {e: count(counts.get(e), LIMIT) for e in EVENTS}
            if event == RESET_BY:
                return blocked, dict.fromkeys(EVENTS, 0)
            return blocked, {**now, event: now[event] + 1 if blocked else 0}

        self.steps.step(journal, event, decide)
