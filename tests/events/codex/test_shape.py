"""An event of another agent's as a Codex hook reads it (initd/events/codex/shape.py):
valid by Codex's input schema of @openai/codex@0.171.0 (vendored:
tests/conformance/contracts/codex), and Claude Code's file tools as an ``apply_patch``
and back."""

from __future__ import annotations

from typing import Any

import pytest

from initd.events.codex import patch, shape
from initd.events.codex.names import EVENTS
from tests.conformance.codex_hooks_support import schema, validate

CLAUDE = {"session_id": "s1", "transcript_path": "/t.jsonl", "cwd": "/w",
          "permission_mode": "plan", "hook_event_name": "X", "source": "clear",
          "tool_name": "Write", "tool_input": {"file_path": "/w/a.txt", "content": "hi\n"},
          "tool_use_id": "toolu_1", "tool_response": {"ok": True}, "prompt": "p",
          "trigger": "manual", "agent_id": "a1", "agent_type": "Explore", "reason": "exit",
          "stop_hook_active": True, "last_assistant_message": "done", "extra": [1]}


@pytest.mark.parametrize("name", EVENTS)
@pytest.mark.parametrize("given", [CLAUDE, {}, {**CLAUDE, "cwd": 3, "trigger": "soon",
                                               "tool_name": "Bash", "tool_input": None}])
def test_another_agents_event_is_valid_by_codex_input_schema(name: str,
                                                              given: dict[str, Any]) -> None:
    made = shape.outward(given, EVENTS[name], name, "sid", "/ws")
    validate(made, schema(name, "input"))
    assert made["hook_event_name"] == name and made["session_id"] == given.get(
        "session_id", "sid")


def test_claudes_file_tools_reach_codex_as_a_patch_and_back() -> None:
    made = shape.outward(CLAUDE, "pre_tool", "PreToolUse", "sid", "/ws")
    assert made["tool_name"] == "apply_patch"
    [back] = shape.inward({**made, "tool_name": "apply_patch"})
    assert back["tool_name"] == "Write" and back["tool_input"] == {
        "file_path": "/w/a.txt", "content": "hi\n"}
    edit = patch.build("MultiEdit", {"file_path": "/elsewhere/b.py", "edits": [
        {"old_string": "a\nb", "new_string": "c"}]}, "/w")
    assert edit is not None and "*** Update File: /elsewhere/b.py\n@@\n-a\n-b\n+c\n" in edit
    assert patch.parse(edit)[0].old == ("a", "b")
