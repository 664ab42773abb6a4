"""The fields of a Claude Code hook's answer initd hands back as the hook gave them
(initd/events/claude/relayed.py): each taken only with the type the reference gives it,
one ill-typed field dropped with a note (never the whole merged answer rejected)."""

from __future__ import annotations

import pytest

from initd.events.claude import relayed


def test_an_events_own_fields_are_relayed() -> None:
    specific = {"initialUserMessage": "hi", "watchPaths": ["/a"], "reloadSkills": True,
                "unknownField": 1}
    assert relayed.relayed("session_start", {}, specific) == (
        {"initialUserMessage": "hi", "watchPaths": ["/a"], "reloadSkills": True}, None)


def test_nothing_to_relay_is_none() -> None:
    assert relayed.relayed("stop", {}, {"sessionTitle": "x"}) == (None, None)


@pytest.mark.parametrize(("event", "specific", "dropped"), [
    ("session_start", {"watchPaths": "/a"}, "watchPaths"),
    ("session_start", {"watchPaths": ["/a", 3]}, "watchPaths"),
    ("user_prompt_submit", {"suppressOriginalPrompt": "yes"}, "suppressOriginalPrompt"),
    ("elicitation", {"action": "maybe"}, "action"),
    ("elicitation", {"content": []}, "content"),
    ("post_tool", {"updatedMCPToolOutput": None}, "updatedMCPToolOutput"),
])
def test_an_ill_typed_field_is_dropped_with_a_note(event: str, specific: dict[str, object],
                                                   dropped: str) -> None:
    out, note = relayed.relayed(event, {}, specific)
    assert out is None
    assert note == f"{dropped}: not of the type Claude Code reads: not passed on"


def test_a_permission_decisions_extras_by_its_behavior() -> None:
    allow = {"decision": {"behavior": "allow", "updatedPermissions": [{"type": "x"}],
                          "interrupt": True}}
    assert relayed.relayed("permission_request", {}, allow) == (
        {"decision": {"behavior": "allow", "updatedPermissions": [{"type": "x"}]}}, None)
    deny = {"decision": {"behavior": "deny", "interrupt": "now"}}
    assert relayed.relayed("permission_request", {}, deny) == (
        None, "decision.interrupt: not of the type Claude Code reads: not passed on")


def test_the_terminal_sequence_on_every_event() -> None:
    assert relayed.relayed("stop", {"terminalSequence": "\x1b]0;t\x07"}, {}) == (
        {"terminalSequence": "\x1b]0;t\x07"}, None)
    assert relayed.relayed("stop", {"terminalSequence": 1}, {})[1] is not None


@pytest.mark.parametrize(("stdout", "path"), [
    ("/w/tree\n", "/w/tree"), ("creating...\n/w/tree\n\n  \n", "/w/tree"),
    ("\x1b[32m/w/tree\x1b[0m\n", "/w/tree"), ("\x1b]8;;x\x07/w/t\x1b]8;;\x1b\\", "/w/t"),
    ("", None), ("\n \n", None),
])
def test_a_worktrees_path_is_stdouts_last_line_without_ansi(stdout: str,
                                                            path: str | None) -> None:
    assert relayed.worktree_path(stdout) == path
