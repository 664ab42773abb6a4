"""initd's event as a Cursor hook's input (initd/events/cursor/outward.py): valid by
py-cursor-hooks 0.1.1's input model of each event it models (vendored:
tests/conformance/contracts/cursor), whatever another agent sent, and read back by
inward.py as the same tool call."""

from __future__ import annotations

from typing import Any

import pytest

from initd.events.cursor import inward, outward
from tests.conformance.cursor_hooks_answers import contract_events, input_errors
from tests.support.calls import call

CLAUDE: dict[str, Any] = {
    "session_id": "s1", "transcript_path": "/t.jsonl", "cwd": "/w", "tool_name": "Bash",
    "tool_input": {"command": "rm -rf x"}, "tool_use_id": "toolu_1",
    "tool_response": {"stdout": "out", "stderr": "err"}, "prompt": "p", "trigger": "manual",
    "stop_hook_active": True, "last_assistant_message": "done", "extra": [1]}
SHAPES = [CLAUDE, {}, {**CLAUDE, "tool_name": "Write",
                       "tool_input": {"file_path": "/w/a", "content": "x"}},
          {**CLAUDE, "tool_name": "mcp__gh__create_issue", "tool_input": {"title": "t"}},
          {**CLAUDE, "tool_input": None, "cwd": 3}]


# What initd cannot give a Cursor hook of another agent's event: the file's content (a
# Read of Claude Code's carries none), a Tab's own edit, the model's text; and an after
# event's result when the event had none. Held here so that a change shows.
NOT_GIVEN = {"beforeReadFile": {"content"}, "beforeTabFileRead": {"file_path", "content"},
             "afterTabFileEdit": {"file_path", "edits"}, "afterAgentResponse": {"text"},
             "afterAgentThought": {"text"}}
NO_RESULT = {"afterMCPExecution": {"result_json", "duration"},
             "afterShellExecution": {"output", "duration"}}


@pytest.mark.parametrize("event", contract_events())
@pytest.mark.parametrize("given", SHAPES)
def test_valid_by_the_input_model(event: str, given: dict[str, Any]) -> None:
    made = outward.outward(event, call(payload=given, workspace="/ws"))
    assert made["hook_event_name"] == event
    missing = NOT_GIVEN.get(event, set()) | (NO_RESULT.get(event, set()) if not given else
                                              set())
    assert sorted(input_errors(event, made)) == sorted(
        f"(top): '{name}' is a required property" for name in missing)


def test_a_shell_command_both_ways() -> None:
    made = outward.outward("beforeShellExecution", call(payload=CLAUDE, workspace="/ws"))
    assert (made["command"], made["cwd"], made["conversation_id"]) == ("rm -rf x", "/w", "s1")
    assert made["output"] == "outerr" and made["extra"] == [1]
    assert "tool_name" not in made and "stop_hook_active" not in made  # Claude Code's words
    back = inward.inward("beforeShellExecution", made)
    assert back["tool_name"] == "Bash" and back["tool_input"] == {"command": "rm -rf x"}


def test_a_write_is_an_edit_of_the_whole_file() -> None:
    write = {"tool_name": "Write", "tool_input": {"file_path": "/w/a", "content": "new"}}
    made = outward.outward("afterFileEdit", call(payload=write))
    assert made["edits"] == [{"old_string": "", "new_string": "new"}]
    made = outward.outward("preToolUse", call(payload=write))
    assert made["tool_name"] == "Write" and made["tool_input"]["contents"] == "new"


def test_an_mcp_tool_and_a_subagent() -> None:
    mcp = outward.outward("beforeMCPExecution", call(payload={
        "tool_name": "mcp__gh__create_issue", "tool_input": {"title": "t"}}))
    assert (mcp["tool_name"], mcp["mcp_server_name"], mcp["tool_input"]) == (
        "create_issue", "gh", '{"title": "t"}')
    task = outward.outward("subagentStart", call(payload={
        "tool_name": "Task", "tool_use_id": "u", "tool_input": {"subagent_type": "explore",
                                                                "prompt": "look"}}))
    assert (task["subagent_type"], task["task"], task["subagent_id"]) == ("explore", "look",
                                                                         "u")


def test_no_session_id_is_the_sessions_own() -> None:
    made = outward.outward("stop", call(payload={}, variables={"SESSION": "own"}))
    assert made["conversation_id"] == "own" and made["loop_count"] == 0
    assert outward.outward("stop", call(payload={"stop_hook_active": True}))["loop_count"] == 1


def test_a_session_end_reason_cursor_does_not_know_is_completed() -> None:
    made = outward.outward("sessionEnd", call(payload={"reason": "logout"}))
    assert made["reason"] == "completed"
