"""VS Code calling initd (``initd emit --from vscode`` as a hook of each of its eight Local
events), and the event in VS Code's shape for its hooks, as its Local hooks reference
(https://code.visualstudio.com/docs/agents/reference/hooks-reference, 2026-09-16) has it.

Its input: snake_case common fields (``timestamp``, ``cwd``, ``session_id``,
``hook_event_name``, ``transcript_path``; the June revision's ``sessionId`` and
``hookEventName`` are read too), and ``tool_input`` the tool's own camelCase arguments:
``run_in_terminal`` {command} is initd's ``Bash``, ``create_file`` {filePath, content}
``Write``, ``replace_string_in_file`` {filePath, oldString, newString} ``Edit``,
``read_file`` {filePath} ``Read``; every other field is kept as sent.

Its answers (exit 0, a JSON object on stdout): ``continue: false`` + ``stopReason`` stops
the agent (SessionStart, SubagentStart and PreCompact ignore it), ``systemMessage`` is for
the user; PreToolUse's ``hookSpecificOutput.permissionDecision`` allow | ask | deny with
``permissionDecisionReason``, ``updatedInput`` and ``additionalContext``; PostToolUse's
and UserPromptSubmit's top-level ``decision: "block"`` + ``reason``; Stop's and
SubagentStop's ``hookSpecificOutput.decision: "block"`` + ``reason`` (the reference's
SubagentStop example has them at the top level: both are written); ``additionalContext``
in ``hookSpecificOutput`` for the events that read it. VS Code cannot block compaction:
a PreCompact initd's hooks blocked is a warning (exit 1, the reason on stderr)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from initd.events import wire
from initd.events.actions import Call
from initd.events.wire import EDIT, READ, SHELL, WRITE, Inbound, Reply, Shim
from initd.state.clock import now_iso

AGENT = "vscode"
FIELD = "hook_event_name"
EVENTS = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit",
          "PreToolUse": "pre_tool", "PostToolUse": "post_tool", "PreCompact": "pre_compact",
          "SubagentStart": "subagent_start", "SubagentStop": "subagent_stop", "Stop": "stop"}
NAMES = {event: name for name, event in EVENTS.items()}
# the Local tools initd's shape names otherwise (toolNames.ts), and their inputs' fields
TOOLS = {"run_in_terminal": SHELL, "create_file": WRITE, "replace_string_in_file": EDIT,
         "read_file": READ}
INPUTS = {WRITE: {"filePath": "file_path"}, READ: {"filePath": "file_path"},
          EDIT: {"filePath": "file_path", "oldString": "old_string", "newString": "new_string"}}
# continue: false and stopReason are not read there (toolCallingLoop.ts: "silently ignored")
NO_STOP = ("session_start", "subagent_start", "pre_compact")
CONTEXT = ("session_start", "subagent_start", "user_prompt_submit", "pre_tool", "post_tool")
SHIM_TIMEOUT = 600  # seconds: VS Code's default (30) is less than initd's hooks may take


class VSCodeWire:
    agent = AGENT
    name_field = FIELD
    events: Mapping[str, str] = EVENTS

    def inbound(self, payload: dict[str, Any], name: str | None) -> Inbound:
        field = FIELD if FIELD in payload or "hookEventName" not in payload \
            else "hookEventName"  # (the June revision's spelling)
        said, event = wire.event_of(payload, name, field, EVENTS, "VS Code (Local)")
        ours = wire.tool(payload, TOOLS, INPUTS)
        ours.setdefault(FIELD, said)
        if isinstance(payload.get("sessionId"), str):
            ours.setdefault("session_id", payload["sessionId"])
        return Inbound(event, ours, wire.Origin(AGENT, said, payload))

    def reply(self, inbound: Inbound, outcome: Mapping[str, Any]) -> Reply:
        event, name = inbound.event, NAMES[inbound.event]
        reason = outcome.get("reason") or outcome.get("feedback") or None
        blocked = bool(outcome.get("blocked"))
        if event == "pre_compact" and blocked:
            return Reply(1, "", f"{reason or 'blocked by a hook'} (VS Code cannot block "
                         "compaction)\n")
        out: dict[str, Any] = {}
        specific: dict[str, Any] = {}
        if event not in NO_STOP and (outcome.get("continue") is False
                                     or outcome.get("aborted")):
            out.update({"continue": False, "stopReason": outcome.get("stopReason") or reason
                        or "a hook stopped the agent"})
        if outcome.get("systemMessage"):
            out["systemMessage"] = outcome["systemMessage"]
        if event == "pre_tool":
            specific.update(_permission(inbound, outcome, blocked, reason))
        elif event in ("post_tool", "user_prompt_submit") and (
                blocked or (event == "post_tool" and outcome.get("feedback"))):
            out.update({"decision": "block", "reason": reason or "blocked by a hook"})
        elif event in ("stop", "subagent_stop") and blocked:
            said = {"decision": "block", "reason": reason or "blocked by a hook"}
            specific.update(said)
            if event == "subagent_stop":  # (the reference's example; VS Code reads both)
                out.update(said)
        if outcome.get("additionalContext") and event in CONTEXT:
            specific["additionalContext"] = outcome["additionalContext"]
        if specific:
            out["hookSpecificOutput"] = {"hookEventName": name, **specific}
        return Reply(0, json.dumps(out) + "\n" if out else "", "")

    def shim(self, command: str) -> Shim:
        """A file of initd's own among the user's hook files: ~/.copilot/hooks/initd.json."""
        entry = {"type": "command", "command": command, "timeout": SHIM_TIMEOUT}
        return Shim(".copilot/hooks/initd.json",
                    {"hooks": {name: [entry] for name in EVENTS}})


def _permission(inbound: Inbound, outcome: Mapping[str, Any], blocked: bool,
                reason: str | None) -> dict[str, Any]:
    """PreToolUse's hookSpecificOutput: the decision, its reason, the updated input."""
    permission = "deny" if blocked else outcome.get("permissionDecision")
    specific: dict[str, Any] = {}
    if permission in ("allow", "ask", "deny"):
        specific["permissionDecision"] = permission
        if reason:
            specific["permissionDecisionReason"] = reason
    updated = outcome.get("updatedInput")
    if isinstance(updated, dict) and permission != "deny":  # in the tool's own names
        tool = {"tool_name": inbound.payload.get("tool_name"), "tool_input": updated}
        specific["updatedInput"] = wire.untool(tool, TOOLS, INPUTS)["tool_input"]
    return specific


def stdin(call: Call) -> dict[str, Any]:
    """The event as a VS Code hook reads it: what VS Code sent, exactly, when it sent it;
    else initd's shape in VS Code's words (its tools, its common fields)."""
    origin = call.origin
    if origin is not None and origin.agent == AGENT:
        return origin.payload
    said = wire.untool(call.payload, TOOLS, INPUTS)
    common = {"timestamp": now_iso(), "cwd": call.workspace,
              "session_id": str(call.variables.get("SESSION") or "")}
    return {**common, **said, FIELD: NAMES.get(call.event, call.event)}


WIRE = VSCodeWire()
