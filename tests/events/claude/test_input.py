"""What a Claude Code hook reads on stdin (initd/events/claude/input.py): the event as the
agent sent it, over the common input fields a guard may rely on."""

from __future__ import annotations

from initd.events.claude import input as claude_input
from tests.support.calls import call


def test_the_common_fields_when_the_agent_left_them_out() -> None:
    got = claude_input.stdin(call(workspace="/work/my.proj", env={"HOME": "/home/a"},
                                  variables={"SESSION": "s-1"}, event="pre_tool",
                                  payload={"tool_name": "Bash"}), "PreToolUse")
    assert got == {"session_id": "s-1", "cwd": "/work/my.proj",
                   "transcript_path": "/home/a/.claude/projects/-work-my-proj/s-1.jsonl",
                   "hook_event_name": "PreToolUse", "permission_mode": "default",
                   "tool_name": "Bash"}


def test_what_the_agent_sent_wins() -> None:
    sent = {"session_id": "real", "transcript_path": "/t.jsonl", "cwd": "/elsewhere",
            "hook_event_name": "PreToolUse", "permission_mode": "plan"}
    assert claude_input.stdin(call(payload=sent), "PreToolUse") == sent


def test_permission_mode_only_on_the_events_whose_example_has_it() -> None:
    for event, has in [("pre_tool", True), ("stop", True), ("session_start", False),
                       ("notification", False)]:
        fields = claude_input.common_fields(call(event=event), "X")
        assert ("permission_mode" in fields) is has, event


def test_no_session_is_an_empty_id_never_a_crash() -> None:
    fields = claude_input.common_fields(call(variables={}), "Stop")
    assert fields["session_id"] == "" and str(fields["transcript_path"]).endswith("/.jsonl")
