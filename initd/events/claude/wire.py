"""Claude Code calling initd (``initd emit --from claude`` as a command hook of every event):
its hook input is initd's shape already, and the answer is a command hook's, as its hooks
reference (https://code.claude.com/docs/en/hooks, "Hook output") reads it:

- exit 0 with a JSON object on stdout: ``continue: false`` + ``stopReason`` stops the
  agent, ``systemMessage`` is for the user, ``decision: "block"`` + ``reason`` blocks the
  events that take one, ``hookSpecificOutput`` (with ``hookEventName``) carries the
  event's own fields: PreToolUse's ``permissionDecision`` (allow | ask | deny),
  ``permissionDecisionReason`` and ``updatedInput``, PermissionRequest's ``decision``
  (``behavior`` allow | deny), PostToolUse's ``updatedToolOutput``, and
  ``additionalContext`` for the model;
- exit 2 with the reason on stderr blocks the events that have no JSON way to (a task
  not created or not completed, a teammate kept working, a worktree not made, an
  elicitation declined).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from initd.events import wire
from initd.events.claude.names import EVENTS, NAMES
from initd.events.wire import Inbound, Reply, Shim

AGENT = "claude"
FIELD = "hook_event_name"
# blocked by "decision": "block" and its "reason" (PostToolUse's and PostToolUseFailure's
# is feedback for the model: the tool already ran)
DECISION = ("user_prompt_submit", "user_prompt_expansion", "post_tool", "post_tool_failure",
            "post_tool_batch", "stop", "subagent_stop", "config_change", "pre_compact")
# additionalContext is read in hookSpecificOutput
CONTEXT = ("session_start", "setup", "user_prompt_submit", "user_prompt_expansion",
           "pre_tool", "post_tool", "post_tool_failure", "post_tool_batch", "subagent_start",
           "notification", "post_compact", "instructions_loaded")


class ClaudeWire:
    agent = AGENT
    name_field = FIELD
    events: Mapping[str, str] = EVENTS

    def inbound(self, payload: dict[str, Any], name: str | None) -> Inbound:
        said = wire.named(payload, name, FIELD, "Claude Code")
        event = EVENTS.get(said)
        if event is None:
            raise wire.WireError(f"Claude Code has no hook event {said!r} that initd knows "
                                 f"(it serves: {', '.join(EVENTS)})")
        return Inbound(event, dict(payload), wire.Origin(AGENT, said, payload))

    def reply(self, inbound: Inbound, outcome: Mapping[str, Any]) -> Reply:
        event, name = inbound.event, NAMES[inbound.event]
        out: dict[str, Any] = {}
        specific: dict[str, Any] = {}
        reason = outcome.get("reason") or outcome.get("feedback")
        if outcome.get("continue") is False or outcome.get("aborted"):
            out.update({"continue": False, "stopReason": outcome.get("stopReason") or reason
                        or "a hook stopped the agent"})
        if outcome.get("systemMessage"):
            out["systemMessage"] = outcome["systemMessage"]
        permission = "deny" if outcome.get("blocked") else outcome.get("permissionDecision")
        if event == "pre_tool" and permission is not None:
            specific.update(permissionDecision=permission)
            if reason:
                specific["permissionDecisionReason"] = reason
        if event == "permission_request" and permission in ("allow", "deny"):
            decision: dict[str, Any] = {"behavior": permission}
            if permission == "deny" and reason:
                decision["message"] = reason
            specific["decision"] = decision
        if outcome.get("updatedInput") is not None and event in ("pre_tool",
                                                                 "permission_request"):
            target = specific.get("decision", specific)
            target["updatedInput"] = outcome["updatedInput"]
        if outcome.get("updatedOutput") is not None and event == "post_tool":
            specific["updatedToolOutput"] = outcome["updatedOutput"]
        if outcome.get("additionalContext") and event in CONTEXT:
            specific["additionalContext"] = outcome["additionalContext"]
        if outcome.get("blocked") or (event in ("post_tool", "post_tool_failure")
                                      and outcome.get("feedback")):
            if event in DECISION:
                out.update({"decision": "block", "reason": reason or "blocked by a hook"})
            elif event not in ("pre_tool", "permission_request"):
                return Reply(2, "", f"{reason or 'blocked by a hook'}\n")
        if specific:
            out["hookSpecificOutput"] = {"hookEventName": name, **specific}
        return Reply(0, json.dumps(out) + "\n" if out else "", "")

    def shim(self, command: str) -> Shim:
        handler = {"type": "command", "command": command}
        return Shim(".claude/settings.json",
                    {"hooks": {name: [{"hooks": [handler]}] for name in EVENTS}})


WIRE = ClaudeWire()
