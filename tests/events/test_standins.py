"""Stand-ins (initd/events/standins.py): a guard initd could not load stays in the
event's answer as that guard's error, never simply not there (invariant 12); said in
the log once, and blocking a blockable event."""

from __future__ import annotations

import json
import subprocess
import sys

from initd.config import log
from initd.events import standins
from initd.events.dialects import DIALECTS
from initd.events.model import BLOCKABLE, EVERY, StandIn
from initd.events.verdict import Tally
from initd.hooks import kinds

BROKEN = StandIn("/ws/.claude/settings.json", "/ws/.claude/settings.json: hooks: bad", "stop",
                 "claude")


def tally(event: str) -> Tally:
    return Tally(kinds.BY_NAME[event], DIALECTS)


def test_a_broken_guard_blocks_a_blockable_event_it_may_be_on() -> None:
    state = tally("stop")
    standins.add([BROKEN], kinds.BY_NAME["stop"], state, set(), _log())
    assert state.blocked and state.reason is not None and "hooks: bad" in state.reason
    [result] = state.results
    assert result.status == "blocked" and result.dialect == "claude"


def test_it_is_an_error_where_it_can_block_nothing_and_absent_elsewhere() -> None:
    after = tally("post_tool")
    standins.add([BROKEN._replace(event="post_tool")], kinds.BY_NAME["post_tool"], after,
                 set(), _log())
    assert not after.blocked and len(after.results) == 1
    other = tally("pre_tool")
    standins.add([BROKEN], kinds.BY_NAME["pre_tool"], other, set(), _log())
    assert other.results == []  # it names stop: not this one's


def test_not_known_which_event_is_every_blockable_one_and_a_directory_every_event() -> None:
    for event, blocked in (("pre_tool", True), ("stop", True)):
        state = tally(event)
        standins.add([BROKEN._replace(event=BLOCKABLE)], kinds.BY_NAME[event], state, set(),
                     _log())
        assert state.blocked is blocked
    state = tally("after_turn")
    standins.add([StandIn("/ws/.discobot/hooks", "too full", EVERY)],
                 kinds.BY_NAME["after_turn"], state, set(), _log())
    assert [(r.hook, r.status) for r in state.results] == [
        ("/ws/.discobot/hooks: (directory)", "error")]


def test_said_once_however_many_events() -> None:
    code = ("from initd.config import log; from initd.events import standins\n"
            "from initd.events.dialects import DIALECTS\n"
            "from initd.events.model import StandIn; from initd.events.verdict import Tally\n"
            "from initd.hooks import kinds\n"
            "log.configure(0, 'json'); said = set()\n"
            "s = StandIn('/f', '/f: bad', '(blockable)', 'claude')\n"
            "for e in ('pre_tool', 'stop', 'pre_tool'):\n"
            "    standins.add([s], kinds.BY_NAME[e], Tally(kinds.BY_NAME[e], DIALECTS), said,"
            " log.get())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    [line] = [json.loads(text) for text in out.stderr.splitlines()]
    assert line["event"].startswith("hook not loaded") and line["source"] == "/f"


def test_an_event_whose_payload_cannot_be_taken() -> None:
    made = standins.payload(kinds.BY_NAME["pre_tool"])
    assert (made.event, made.on_error, made.label) == ("pre_tool", "deny",
                                                       "the hooks of pre_tool")


def _log() -> log.Logger:
    return log.get()
