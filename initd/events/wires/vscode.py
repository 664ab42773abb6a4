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

from initd.events import answers, wire
from initd.events.actions import ActionResult, Call, Status
from initd.events.model import EventHook
from initd.events.verdict import Decision, Verdict
from initd.events.wire import EDIT, READ, SHELL, WRITE, Inbound, Reply, Shim
from initd.hooks.kinds import Event
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


# --------------------------------------------------------------------------------------
# What a VS Code hook's answer means, as its Local hooks reference ("Exit codes", "Common
# output", each event's "Output") and its harness (chatHookService.ts, toolCallingLoop.ts)
# read it: a pure function of the result (verdict.py's Verdict).
#
# - Exit 2: stderr blocks: a PreToolUse is denied, a UserPromptSubmit blocked, a Stop or
#   SubagentStop kept working (with stderr as the reason; nothing when stderr is empty); on
#   PostToolUse it is the model's feedback (the tool ran); SessionStart, SubagentStart and
#   PreCompact ignore it.
# - Any other exit, a timeout, a hook that could not run: a warning; nothing decided.
# - Exit 0: a JSON object on stdout decides (plain text is ignored): ``continue: false`` or
#   a ``stopReason`` stops the agent (not on SessionStart, SubagentStart, PreCompact),
#   ``systemMessage``; PreToolUse's ``hookSpecificOutput.permissionDecision`` (deny blocks;
#   an invalid value is ignored), ``permissionDecisionReason``, ``updatedInput``;
#   PostToolUse's and UserPromptSubmit's top-level ``decision: "block"`` + ``reason``;
#   Stop's and SubagentStop's ``hookSpecificOutput.decision: "block"``, only with a
#   ``reason``; ``additionalContext``. An answer for another event is not read: a
#   top-level ``hookEventName`` of another event drops it all, one in
#   ``hookSpecificOutput`` that part (a Stop's answer counts for SubagentStop, a
#   SessionStart's for SubagentStart).
#
# initd's own rules stand over VS Code's: a hook that could not load, or a stdout that
# starts like a JSON answer and cannot be read, is an error that blocks a blockable event
# (invariant 12), where VS Code would go on.
COMPATIBLE = {"subagent_stop": "Stop", "subagent_start": "SessionStart"}
EXIT_2 = ("pre_tool", "user_prompt_submit", "stop", "subagent_stop")  # blocked by exit 2


def verdict(result: ActionResult, hook: EventHook, event: Event) -> Verdict:
    if result.status in (Status.ERROR, Status.UNTRUSTED):
        blocks = event.blockable and (hook.on_error == "deny" or result.fails_closed)
        return Verdict(blocks, False, None, f"{hook.label}: {result.error}", None,
                       result.error, permission="deny" if blocks and event.name == "pre_tool"
                       else None)
    if result.status == Status.STARTED or result.exit_code not in (0, 2):
        return Verdict(False, False, None, None, None, result.error or (
            f"exit {result.exit_code}: a warning, nothing decided (VS Code goes on)"))
    if result.exit_code == 2:
        return _exit_2(result, hook, event)
    data = answers.read(result)  # (Unreadable: the hook's error, verdict.py)
    if data is None:
        return Verdict(False, False, None, None, None, result.error)
    return _json(data, event)


def _exit_2(result: ActionResult, hook: EventHook, event: Event) -> Verdict:
    said = result.stderr.strip()
    if event.name == "post_tool":
        return Verdict(False, False, None, None, said or f"{hook.label} exited 2", None)
    if event.name not in EXIT_2 or (not said and event.name in ("stop", "subagent_stop")):
        return Verdict(False, False, None, None, None,
                       f"exit 2 {'with nothing on stderr ' if not said else ''}is not a "
                       f"block on {NAMES[event.name]}")
    return Verdict(True, False, Decision.BLOCK, said or f"{hook.label} exited 2", None, None,
                   permission="deny" if event.name == "pre_tool" else None)


def _json(data: dict[str, Any], event: Event) -> Verdict:
    name = NAMES[event.name]
    if not _ours(data.get("hookEventName"), event.name):
        return Verdict(False, False, None, None, None, f"an answer for "
                       f"{data['hookEventName']!r}, not {name}: not read")
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) and _ours(
        specific.get("hookEventName"), event.name) else {}
    stops = data.get("continue") is False or isinstance(data.get("stopReason"), str)
    stops = stops and event.name not in NO_STOP
    context = _text(specific.get("additionalContext"))
    if event.name == "user_prompt_submit":
        context = context or _text(data.get("additionalContext"))
    blocks, reason, feedback, permission = False, None, None, None
    if event.name == "pre_tool":
        said = specific.get("permissionDecision")
        permission = said if said in ("allow", "ask", "deny") else None
        reason = _text(specific.get("permissionDecisionReason"))
        blocks = permission == "deny"
        reason = reason or ("denied by a hook" if blocks else None)
    elif event.name in ("post_tool", "user_prompt_submit") and data.get("decision") == "block":
        reason = _text(data.get("reason")) or "blocked by a hook"
        blocks, feedback = event.name == "user_prompt_submit", reason
        reason = reason if blocks else None
    elif event.name in ("stop", "subagent_stop") and specific.get("decision") == "block":
        reason = _text(specific.get("reason"))
        blocks = reason is not None
    updated = specific.get("updatedInput") if event.name == "pre_tool" else None
    return Verdict(blocks, False, Decision.BLOCK if blocks else None, reason,
                   None if blocks else feedback, None, permission=permission,
                   context=context, system_message=_text(data.get("systemMessage")),
                   continue_=False if stops else None,
                   stop_reason=(_text(data.get("stopReason")) or "") if stops else None,
                   updated_input=updated if isinstance(updated, dict) else None)


def _ours(said: object, event: str) -> bool:
    return said is None or said == NAMES[event] or said == COMPATIBLE.get(event)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
