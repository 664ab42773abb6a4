"""A Cursor payload in initd's shape (initd/events/cursor/inward.py), every field it does
not translate kept: each event of Cursor's reference (its "// Input" examples, in
tests/conformance/cursor_hooks_support.py) becomes the tool call a guard of any format
reads, and whatever the agent sends is a payload, never an exception."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from initd.events.cursor import inward
from initd.events.cursor.names import EVENTS
from tests.conformance.cursor_hooks_support import CONVERSATION, payload
from tests.conformance.cursor_hooks_support import EVENTS as CURSOR_EVENTS


@pytest.mark.parametrize(("event", "tool", "tool_input"), [
    ("beforeShellExecution", "Bash", {"command": "npm install"}),
    ("beforeReadFile", "Read", {"file_path": "/home/u/project/README.md"}),
    ("beforeMCPExecution", "mcp__github__create_issue", None),
    ("subagentStart", "Task", None),
    ("afterFileEdit", "Edit", None),
    ("preToolUse", "Bash", None),  # Cursor's Shell
])
def test_each_tool_event_is_its_tool_call(event: str, tool: str,
                                          tool_input: dict[str, Any] | None) -> None:
    sent = payload(event)
    if event == "preToolUse":
        sent = {**sent, "tool_name": "Shell", "tool_input": {"command": "ls"}}
    if event == "beforeMCPExecution":
        sent = {**sent, "mcp_server_name": "github", "tool_name": "create_issue",
                "tool_input": '{"title": "x"}'}
    got = inward.inward(event, sent)
    assert got["tool_name"] == tool
    assert isinstance(got["tool_input"], dict)
    if tool_input is not None:
        assert got["tool_input"] == tool_input
    assert got["hook_event_name"] in ("PreToolUse", "PostToolUse")
    assert got["session_id"] == CONVERSATION and got["cwd"] == "/home/u/project"


@pytest.mark.parametrize("event", CURSOR_EVENTS)
def test_every_event_keeps_what_it_does_not_translate(event: str) -> None:
    sent = {**payload(event), "extra_field": [1]}
    got = inward.inward(event, sent)
    assert got["extra_field"] == [1] and got["hook_event_name"]
    assert EVENTS[event]  # (every event of the reference is one of initd's)


def test_a_whole_write_and_a_partial_one() -> None:
    whole = inward.inward("preToolUse", {"tool_name": "Write", "tool_input": {
        "file_path": "/a", "contents": "x"}})
    assert whole["tool_name"] == "Write" and whole["tool_input"]["content"] == "x"
    partial = inward.inward("preToolUse", {"tool_name": "Write", "tool_input": {
        "file_path": "/a", "old_string": "a", "new_string": "b"}})
    assert partial["tool_name"] == "Edit"


def test_a_stop_says_whether_a_follow_up_was_sent_already() -> None:
    assert inward.inward("stop", {"loop_count": 1})["stop_hook_active"] is True
    assert inward.inward("stop", {"loop_count": 0})["stop_hook_active"] is False
    assert inward.inward("stop", {"loop_count": 1, "stop_hook_active": False}
                         )["stop_hook_active"] is False  # what it said wins
    sub = inward.inward("subagentStop", {"subagent_type": "explore", "summary": "done"})
    assert (sub["agent_type"], sub["last_assistant_message"]) == ("explore", "done")


def test_an_mcp_input_that_is_no_json_object_is_kept_as_input() -> None:
    got = inward.inward("beforeMCPExecution", {"tool_name": "t", "mcp_server_name": "s",
                                               "tool_input": "not json"})
    assert got["tool_input"] == {"input": "not json"}
    assert inward.parsed('{"a": 1}') == {"a": 1} and inward.parsed(3) == 3


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                    lambda inner: st.lists(inner, max_size=3) |
                    st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)
KEYS = st.sampled_from(["tool_name", "tool_input", "command", "file_path", "edits",
                        "mcp_server_name", "result_json", "output", "loop_count", "task",
                        "workspace_roots", "conversation_id", "session_id", "cwd",
                        "tool_output", "summary", "subagent_type", "duration"])


@given(st.sampled_from(CURSOR_EVENTS), st.dictionaries(KEYS, JSON, max_size=6))
def test_anything_the_agent_sends_is_a_payload(event: str, sent: dict[str, Any]) -> None:
    got = inward.inward(event, sent)
    assert isinstance(got, dict) and isinstance(got["hook_event_name"], str)
