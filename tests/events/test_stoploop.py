"""The Stop loop, bounded (initd/events/stoploop.py): blocks in a row counted per event, a
Claude Code hook told ``stop_hook_active`` after a blocked Stop, nothing blocks once CAP
were, a user prompt starts again, and a Stop sent again with its journal entry is counted
once. Over a kill -9: tests/service/test_stop_loop_resend.py."""

from __future__ import annotations

from pathlib import Path

from initd.config import log
from initd.events.stoploop import CAP, LIMIT, StopLoop
from initd.state.agentfs import Place
from initd.state.journal import Journal


def loop(tmp_path: Path, cap: int = CAP) -> StopLoop:
    return StopLoop(str(tmp_path), log.get(), cap)


def test_blocks_in_a_row_up_to_the_cap(tmp_path: Path) -> None:
    stops = loop(tmp_path, cap=3)
    for n in range(3):
        assert stops.blocked_before("stop") == n and stops.why_not("stop") is None
        stops.after("stop", blocked=True)
    assert stops.why_not("stop") == ("not blocked: 3 stop events in a row were blocked (the "
                                     "loop cap is 3), so this one goes through")
    assert stops.why_not("subagent_stop") is None  # counted per event
    stops.after("stop", blocked=False)
    assert stops.blocked_before("stop") == 0


def test_a_user_prompt_starts_both_again(tmp_path: Path) -> None:
    stops = loop(tmp_path)
    stops.after("stop", True)
    stops.after("subagent_stop", True)
    stops.after("pre_tool", True)  # no other event counts
    assert (stops.blocked_before("stop"), stops.blocked_before("subagent_stop")) == (1, 1)
    stops.after("user_prompt_submit", False)
    assert (stops.blocked_before("stop"), stops.blocked_before("subagent_stop")) == (0, 0)
    assert stops.blocked_before("pre_tool") == 0


def test_stop_hook_active_after_a_blocked_stop_unless_the_agent_said(tmp_path: Path) -> None:
    stops = loop(tmp_path)
    assert stops.said("stop", {"a": 1}) == {"a": 1, "stop_hook_active": False}
    stops.after("stop", True)
    assert stops.said("stop", {})["stop_hook_active"] is True
    assert stops.said("stop", {"stop_hook_active": False}) == {"stop_hook_active": False}
    assert stops.said("pre_tool", {}) == {}


def test_the_count_outlives_the_service(tmp_path: Path) -> None:
    loop(tmp_path).after("stop", True)
    assert loop(tmp_path).blocked_before("stop") == 1  # a restarted service goes on


def test_a_stop_sent_again_is_counted_once(tmp_path: Path) -> None:
    journal = Journal(Place(str(tmp_path), ("journal",)))
    stops = loop(tmp_path)
    with journal.entry("event", "k1") as first:
        assert first is not None
        stops.after("stop", True, first)
    with journal.entry("event", "k1") as again:  # the same Stop, sent again
        assert again is not None
        assert stops.blocked_before("stop", again) == 0  # as it was before its first
        stops.after("stop", True, again)
    assert stops.blocked_before("stop") == 1


def test_what_the_agent_writes_in_the_ledger_is_bounded(tmp_path: Path) -> None:
    """The count is the agent's (ARCHITECTURE.md, threat model: the Stop loop's count is
    among what the service decides): a count it plants is taken, but never past LIMIT,
    and a line that is not the ledger's is skipped."""
    (tmp_path / "stop-loop.steps").write_text(
        'not json\n{"request": null, "step": "stop", "value": true, '
        '"state": {"stop": 99999999999, "subagent_stop": "x"}}\n')
    stops = loop(tmp_path)
    assert stops.blocked_before("stop") == LIMIT
    assert stops.blocked_before("subagent_stop") == 0
