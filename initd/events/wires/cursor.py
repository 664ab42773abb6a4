"""Cursor calling initd (``initd emit --from cursor`` as the command hook of every event, in
``~/.cursor/hooks.json``): its hook input is read into initd's shape (inward.py), and the
answer is what a Cursor command hook answers (https://cursor.com/docs/agent/hooks,
revision of 2026-08-24), exit 0 and one JSON object on stdout, never a hook failure
(which Cursor lets through, or, under the shim's ``failClosed``, blocks):

- preToolUse, subagentStart, beforeShellExecution, beforeMCPExecution, beforeReadFile,
  beforeTabFileRead: ``permission`` (deny when blocked; ``ask`` where the event can ask,
  else a deny), with ``user_message`` and ``agent_message`` where the event has them, and
  preToolUse's ``updated_input``; an allow only when a hook said allow (Cursor's own
  approval goes on otherwise);
- beforeSubmitPrompt: ``continue: false`` and ``user_message`` when blocked;
- stop, subagentStop: ``followup_message``, the block's reason (a Cursor hook's follow-up,
  a Claude Code hook's ``decision: "block"`` reason);
- sessionStart: ``additional_context``, and ``env``, what Cursor hooks of the event gave
  (Cursor passes it to its later hooks); postToolUse: ``additional_context`` and an MCP
  tool's ``updated_mcp_tool_output``; preCompact: ``user_message``; workspaceOpen: the
  ``pluginPaths`` its Cursor hooks gave;
- ``continue: false`` of a hook (stop the agent) is a deny on the events that have a
  permission and ``continue: false`` on beforeSubmitPrompt: Cursor has no other way to
  stop there. Anything else: no output (no decision)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from initd.events import wire
from initd.events.cursor.inward import inward
from initd.events.cursor.names import (
    ASKS,
    EVENTS,
    FOLLOW_UPS,
    GATHERED,
    GUARDS,
    PERMISSION,
    WRITE,
)
from initd.events.wire import Inbound, Reply, Shim

AGENT = "cursor"
FIELD = "hook_event_name"
# what the answers of these events gather from their Cursor hooks' own JSON


class CursorWire:
    agent = AGENT
    name_field = FIELD
    events: Mapping[str, str] = EVENTS

    def inbound(self, payload: dict[str, Any], name: str | None) -> Inbound:
        said, event = wire.event_of(payload, name, FIELD, EVENTS, "Cursor")
        return Inbound(event, inward(said, payload), wire.Origin(AGENT, said, payload))

    def reply(self, inbound: Inbound, outcome: Mapping[str, Any]) -> Reply:
        name = inbound.origin.name
        stop = outcome.get("continue") is False or bool(outcome.get("aborted"))
        reason = str(outcome.get("reason") or outcome.get("stopReason")
                     or outcome.get("feedback") or "blocked by a hook")
        out: dict[str, Any] = {}
        if name in PERMISSION:
            out = _permission(name, inbound, outcome, stop, reason)
        elif name == "beforeSubmitPrompt" and (outcome.get("blocked") or stop):
            out = {"continue": False, "user_message": reason}
        elif name in FOLLOW_UPS and outcome.get("blocked") and outcome.get("reason"):
            out = {"followup_message": str(outcome["reason"])}
        elif name in ("sessionStart", "postToolUse") and outcome.get("additionalContext"):
            out = {"additional_context": outcome["additionalContext"]}
        elif name == "preCompact" and outcome.get("systemMessage"):
            out = {"user_message": outcome["systemMessage"]}
        if name == "postToolUse" and outcome.get("updatedOutput") is not None and str(
                inbound.payload.get("tool_name")).startswith("mcp__"):
            out["updated_mcp_tool_output"] = outcome["updatedOutput"]
        if name in GATHERED:
            out.update(_gathered(GATHERED[name], outcome))
        return Reply(0, json.dumps(out) + "\n" if out else "", "")

    def shim(self, command: str) -> Shim:
        line = wire.absolute(command)
        return Shim(".cursor/hooks.json", {"version": 1, "hooks": {
            name: [{"command": line, **({"failClosed": True} if name in GUARDS else {})}]
            for name in EVENTS}})


def _permission(name: str, inbound: Inbound, outcome: Mapping[str, Any], stop: bool,
                reason: str) -> dict[str, Any]:
    """The answer of an event that has a ``permission``; {} when no hook decided."""
    said = "deny" if outcome.get("blocked") or stop else outcome.get("permissionDecision")
    if said == "ask" and name not in ASKS:
        said = "deny"
        reason = f"{reason} (a hook asks for a person's approval, which Cursor's {name} " \
                 "cannot ask for: denied)"
    if said not in ("allow", "deny", "ask"):
        return {}
    out: dict[str, Any] = {"permission": said}
    if said != "allow" and name != "beforeTabFileRead":
        out["user_message"] = reason
        if name != "subagentStart":
            out["agent_message"] = str(outcome.get("feedback") or reason)
    updated = outcome.get("updatedInput")
    if name == "preToolUse" and said != "deny" and isinstance(updated, dict):
        if inbound.payload.get("tool_name") == WRITE and "content" in updated:
            updated = {("contents" if k == "content" else k): v for k, v in updated.items()}
        out["updated_input"] = updated
    return out


def _gathered(field: str, outcome: Mapping[str, Any]) -> dict[str, Any]:
    """``field`` of the JSON answers of the event's Cursor hooks (cursor/answers.py puts
    each in the outcome's ``hookSpecific``; an ``env`` already without what would change
    what a later hook's process loads or runs): an object's keys merged, a list's items
    joined (none: nothing)."""
    found: dict[str, Any] | list[Any] | None = None
    for said in (outcome.get("hookSpecific") or {}).get(AGENT) or []:
        value = said.get(field) if isinstance(said, Mapping) else None
        if isinstance(value, dict):
            found = {**(found if isinstance(found, dict) else {}), **value}
        elif isinstance(value, list):
            found = [*(found if isinstance(found, list) else []), *value]
    return {} if found is None else {field: found}


WIRE = CursorWire()
