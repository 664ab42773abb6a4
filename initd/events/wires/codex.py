"""Codex calling initd (``initd emit --from codex`` as a command hook of every event, in
``~/.codex/hooks.json``): its hook input is read into initd's shape (shape.inward), and
the answer is one JSON object on stdout, exit 0, valid by the event's output schema of
@openai/codex@0.171.0 (``additionalProperties: false``: no field it has not), as Codex
reads it (openai/codex ``codex-rs/hooks/src/events``). An ``apply_patch`` reaches other
formats' hooks as one Write or Edit per file it writes (up to PATCH_FILES; a patch of more
is not allowed), and a hook's rewrite of one file of several is a deny: the patch cannot
be made of it.

- PreToolUse: ``hookSpecificOutput.permissionDecision: "deny"`` with its
  ``permissionDecisionReason`` (never empty); ``allow`` only with ``updatedInput``, which
  is all Codex takes of an allow; ``additionalContext``. Codex refuses ``ask`` and
  ``continue: false`` there: a stop is a deny, an ask is no answer (Codex's own approval
  asks, when its policy does).
- PermissionRequest: ``hookSpecificOutput.decision.behavior`` allow | deny (``message``);
  an allow that rewrote the input is no answer (Codex fails closed on ``updatedInput``).
- PostToolUse: ``decision: "block"`` + ``reason`` is feedback for the model; an MCP tool's
  new output is ``updatedMCPToolOutput``.
- UserPromptSubmit, Stop, SubagentStop: ``decision: "block"`` + ``reason`` (a Stop's is
  the prompt to go on with); SessionStart, SubagentStart: ``additionalContext``.
- ``continue: false`` + ``stopReason`` stops Codex where it reads one (PreCompact's block
  too: compaction does not happen); ``systemMessage`` on every event that has one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from initd.events import wire
from initd.events.codex import patch, shape
from initd.events.codex.names import EVENTS, NAMES, PATCH
from initd.events.wire import Inbound, Reply, Shim

AGENT = "codex"
FIELD = "hook_event_name"
Build = Callable[[dict[str, Any], Inbound, Mapping[str, Any], str], None]
# files of one apply_patch put to other formats' hooks, each an event of its own; a patch
# of more is refused (each file is a run of every Write|Edit hook: none goes unseen)
PATCH_FILES = 256


class CodexWire:
    agent = AGENT
    name_field = FIELD
    events: Mapping[str, str] = EVENTS

    def inbound(self, payload: dict[str, Any], name: str | None) -> Inbound:
        said, event = wire.event_of(payload, name, FIELD, EVENTS, "Codex")
        first, *more = shape.inward(payload)
        if len(more) >= PATCH_FILES:
            raise wire.WireError(f"a Codex apply_patch of {len(more) + 1} files: more than "
                                 f"the {PATCH_FILES} initd puts to other formats' hooks "
                                 "one by one")
        return Inbound(event, first, wire.Origin(AGENT, said, payload, each=tuple(more)))

    def reply(self, inbound: Inbound, outcome: Mapping[str, Any]) -> Reply:
        if inbound.event == "session_end":  # (no output schema: Codex reads nothing)
            return Reply(0)
        out: dict[str, Any] = {}
        if outcome.get("systemMessage"):
            out["systemMessage"] = str(outcome["systemMessage"])
        why = str(outcome.get("reason") or outcome.get("feedback") or "blocked by a hook")
        BUILDS.get(inbound.event, _compact)(out, inbound, outcome, why)
        return Reply(0, json.dumps(out) + "\n" if out else "")

    def unasked(self, inbound: Inbound, why: str) -> Reply:
        """An event that guards nothing initd could not put to its hooks: a warning Codex
        shows (never a failure, nor a Stop's block, which would keep it working)."""
        if inbound.event == "session_end":
            return Reply(0, "", f"{why}\n")
        return Reply(0, json.dumps({"systemMessage": why}) + "\n")

    def shim(self, command: str) -> Shim:
        handler = {"type": "command", "command": wire.absolute(command)}
        return Shim(".codex/hooks.json",
                    {"hooks": {name: [{"hooks": [handler]}] for name in EVENTS}})


def _stop(out: dict[str, Any], outcome: Mapping[str, Any], why: str) -> bool:
    """``continue: false`` when a hook stopped the agent (or aborted the event)."""
    if outcome.get("continue") is False or outcome.get("aborted"):
        out.update({"continue": False, "stopReason": str(outcome.get("stopReason") or why)})
        return True
    return False


def _specific(out: dict[str, Any], inbound: Inbound, **fields: Any) -> None:
    given = {k: v for k, v in fields.items() if v is not None}
    if given:
        out["hookSpecificOutput"] = {"hookEventName": NAMES[inbound.event], **given}


def _pre_tool(out: dict[str, Any], inbound: Inbound, outcome: Mapping[str, Any],
              why: str) -> None:
    updated, problem = _updated(inbound, outcome.get("updatedInput"))
    stops = outcome.get("continue") is False or bool(outcome.get("aborted"))
    context = outcome.get("additionalContext") or None
    if outcome.get("blocked") or stops or problem:
        said = why if outcome.get("blocked") else problem or str(
            outcome.get("stopReason") or why)
        _specific(out, inbound, permissionDecision="deny", permissionDecisionReason=said,
                  additionalContext=context)
    elif outcome.get("permissionDecision") == "allow" and updated is not None:
        _specific(out, inbound, permissionDecision="allow", updatedInput=updated,
                  additionalContext=context)
    else:
        _specific(out, inbound, additionalContext=context)


def _updated(inbound: Inbound, given: Any) -> tuple[dict[str, Any] | None, str | None]:
    """A hook's new tool input, as Codex's tool takes it (an ``apply_patch``'s patch);
    (None, why) when it cannot be one: the call is denied, never run as it was."""
    if not isinstance(given, dict):
        return None, None
    if inbound.origin.payload.get("tool_name") != PATCH or isinstance(
            given.get("command"), str):
        return given, None
    if inbound.origin.each:  # (a Write or Edit of one file cannot stand for the patch)
        return None, ("initd: a hook rewrote one file of a patch of several: initd cannot "
                      "make the whole patch of it")
    cwd = str(inbound.payload.get("cwd") or "")
    made = patch.build(str(inbound.payload.get("tool_name")), given, cwd)
    if made is None:
        return None, "initd: a hook rewrote the patch's input in a form Codex cannot take"
    return {"command": made}, None


def _permission(out: dict[str, Any], inbound: Inbound, outcome: Mapping[str, Any],
                why: str) -> None:
    if outcome.get("blocked") or outcome.get("continue") is False or outcome.get("aborted"):
        said = why if outcome.get("blocked") else str(outcome.get("stopReason") or why)
        _specific(out, inbound, decision={"behavior": "deny", "message": said})
    elif outcome.get("permissionDecision") == "allow" and outcome.get("updatedInput") is None:
        _specific(out, inbound, decision={"behavior": "allow"})


def _post_tool(out: dict[str, Any], inbound: Inbound, outcome: Mapping[str, Any],
               why: str) -> None:
    _stop(out, outcome, why)
    feedback = outcome.get("feedback") or (why if outcome.get("blocked") else None)
    if feedback:
        out.update({"decision": "block", "reason": str(feedback)})
    tool = inbound.origin.payload.get("tool_name")
    mcp = isinstance(tool, str) and tool.startswith(wire.MCP_PREFIX)
    _specific(out, inbound, additionalContext=outcome.get("additionalContext") or None,
              updatedMCPToolOutput=outcome.get("updatedOutput") if mcp else None)


def _blocks(out: dict[str, Any], inbound: Inbound, outcome: Mapping[str, Any],
            why: str) -> None:
    """UserPromptSubmit, Stop, SubagentStop: ``decision: "block"``; a Stop's context
    keeps the agent going as a block does (verdict.Tally: it counts as one)."""
    if _stop(out, outcome, why):
        return
    context = outcome.get("additionalContext") or None
    if outcome.get("blocked"):
        out.update({"decision": "block", "reason": why})
    if inbound.event == "user_prompt_submit":
        _specific(out, inbound, additionalContext=context)
    elif context and not outcome.get("blocked"):
        out.update({"decision": "block", "reason": str(context)})


def _start(out: dict[str, Any], inbound: Inbound, outcome: Mapping[str, Any],
           why: str) -> None:
    _stop(out, outcome, why)
    _specific(out, inbound, additionalContext=outcome.get("additionalContext") or None)


def _compact(out: dict[str, Any], inbound: Inbound, outcome: Mapping[str, Any],
             why: str) -> None:
    """PreCompact, PostCompact: the universal fields; a block of compaction stops it."""
    if outcome.get("blocked") and inbound.event == "pre_compact":
        out.update({"continue": False, "stopReason": why})
    else:
        _stop(out, outcome, why)


BUILDS: dict[str, Build] = {
    "pre_tool": _pre_tool, "permission_request": _permission, "post_tool": _post_tool,
    "user_prompt_submit": _blocks, "stop": _blocks, "subagent_stop": _blocks,
    "session_start": _start, "subagent_start": _start,
    "interrupt": lambda out, inbound, outcome, why: None}

WIRE = CodexWire()
