"""A Cursor hook's matcher (initd/events/cursor/matcher.py): its event's own filter first
(an event of one tool is that tool's alone), then the expression searched in the value
the event has; a value the event lacks runs the hook (fail closed)."""

from __future__ import annotations

import pytest

from initd.events.cursor.matcher import CursorMatcher, value_of


def bash(command: object) -> dict[str, object]:
    return {"tool_name": "Bash", "tool_input": {"command": command}}


@pytest.mark.parametrize(("event", "regex", "payload", "matches"), [
    ("beforeShellExecution", None, bash("ls"), True),
    ("beforeShellExecution", None, {"tool_name": "Read"}, False),  # not its tool
    ("beforeShellExecution", "rm -rf", bash("sudo rm -rf /"), True),  # searched
    ("beforeShellExecution", "^rm", bash("sudo rm"), False),
    ("beforeShellExecution", "rm", bash(3), True),  # no text to test: the hook runs
    ("preToolUse", "Shell", {"tool_name": "Bash"}, True),  # Cursor's name of it
    ("preToolUse", "MCP:create", {"tool_name": "mcp__gh__create_issue"}, True),
    ("preToolUse", "Write", {"tool_name": "Edit"}, True),
    ("beforeMCPExecution", None, {"tool_name": "mcp__x__y"}, True),
    ("beforeMCPExecution", None, {"tool_name": "Bash"}, False),
    ("stop", "Stop", {}, True), ("stop", "^Go$", {}, False),  # a fixed word
    ("afterFileEdit", "Write", {"tool_name": "MultiEdit"}, True),
    ("subagentStart", "explore", {"tool_name": "Task", "tool_input": {
        "subagent_type": "explore"}}, True),
])
def test_a_cursor_matcher(event: str, regex: str | None, payload: dict[str, object],
                          matches: bool) -> None:
    made = CursorMatcher(regex or "", event, regex=regex)
    assert made.matches(payload) is matches


def test_the_value_of_each_event() -> None:
    assert value_of("beforeReadFile", {"tool_name": "Read"}) == "Read"
    assert value_of("subagentStop", {"agent_type": "plan"}) == "plan"
    assert value_of("beforeSubmitPrompt", {}) == "UserPromptSubmit"
    assert value_of("postToolUse", {"tool_name": "Task"}) == "Task"
