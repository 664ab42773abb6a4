"""What initd answers Gemini CLI (initd/events/wires/gemini.py): tool selections merged as
Gemini merges them, a rewritten input over the model's, a notification's two fields."""

from __future__ import annotations

import json
from typing import Any

from initd.events.wire import Inbound, Origin
from initd.events.wires import gemini as gwire


def came(name: str, **payload: Any) -> Inbound:
    return Inbound(gwire.EVENTS[name], payload, Origin("gemini", name, payload))


def test_tool_selection_answers_merge_as_gemini_merges_them() -> None:
    own: list[dict[str, Any]] = [
        {"toolConfig": {"mode": "ANY", "allowedFunctionNames": ["b", "a"]}},
           {"toolConfig": {"mode": "AUTO", "allowedFunctionNames": ["c"]}}]
    reply = gwire.WIRE.reply(came("BeforeToolSelection"), {"hookSpecific": {"gemini": own}})
    assert json.loads(reply.stdout)["hookSpecificOutput"]["toolConfig"] == {
        "mode": "ANY", "allowedFunctionNames": ["a", "b", "c"]}
    own.append({"toolConfig": {"mode": "NONE"}, "clearContext": True})
    reply = gwire.WIRE.reply(came("BeforeToolSelection"), {"hookSpecific": {"gemini": own}})
    assert json.loads(reply.stdout)["hookSpecificOutput"] == {
        "hookEventName": "BeforeToolSelection",
        "toolConfig": {"mode": "NONE", "allowedFunctionNames": []}}  # (no clearContext)


def test_a_rewritten_input_is_merged_over_the_models() -> None:
    reply = gwire.WIRE.reply(came("BeforeTool", tool_input={"command": "ls", "dir_path": "s"}),
                             {"updatedInput": {"command": "ls -la"}})
    assert json.loads(reply.stdout)["hookSpecificOutput"]["tool_input"] == {
        "command": "ls -la", "dir_path": "s"}


def test_notification_is_answered_with_its_two_fields_only() -> None:
    reply = gwire.WIRE.reply(came("Notification"), {
        "blocked": True, "reason": "no", "continue": False, "systemMessage": "seen",
        "additionalContext": "c"})
    assert json.loads(reply.stdout) == {"systemMessage": "seen\nno"}
