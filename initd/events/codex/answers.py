"""What a Codex hook's answer means, per event, as Codex reads it (openai/codex
``codex-rs/hooks/src``: events/*.rs ``parse_completed`` and engine/output_parser.rs;
the output schemas of @openai/codex@0.171.0): a pure function of its result.

- Exit 0: empty stdout says nothing; plain text is context for the model on
  SessionStart, SubagentStart and UserPromptSubmit, the hook's failure on Stop,
  SubagentStop and Interrupt, and ignored elsewhere; a JSON object is read by the
  event's output schema, whose every object is ``additionalProperties: false``: a field
  it has not, or of the wrong kind, is the hook's failure, as are the fields Codex
  "does not support" there (PreToolUse's ``ask``, an ``allow`` without ``updatedInput``,
  ``continue: false``; a ``decision: "block"`` without a ``reason``).
- Exit 2 with a reason on stderr: PreToolUse and PermissionRequest deny, UserPromptSubmit
  is blocked, Stop and SubagentStop go on with it as their prompt, PostToolUse gives it
  to the model; without one, and any other exit, the hook failed.
- A failure decides nothing (Codex "fails open" there, and initd with it); what initd
  could not run or read (the hook's error, an answer over initd's limit or no JSON) is
  initd's rule: it blocks a blockable event (invariant 12).
"""

from __future__ import annotations

from typing import Any

from initd.events import answers
from initd.events.actions import ActionResult, Status
from initd.events.codex.names import NAMES
from initd.events.verdict import Decision, Verdict
from initd.hooks.kinds import Event

EXIT2 = ("pre_tool", "permission_request", "user_prompt_submit", "stop", "subagent_stop")
PLAIN_CONTEXT = ("session_start", "subagent_start", "user_prompt_submit")
PLAIN_FAILS = ("stop", "subagent_stop", "interrupt")
PERMISSION = ("pre_tool", "permission_request")
UNIVERSAL = {"continue": bool, "stopReason": str, "suppressOutput": bool,
             "systemMessage": str}
CONTEXT = {"additionalContext": str}
BLOCK = {"decision": ("block",), "reason": str}
# each event's output schema (the fields, their kinds; a dict is an object of them)
SCHEMAS: dict[str, dict[str, Any]] = {
    "session_start": {**UNIVERSAL, "hookSpecificOutput": CONTEXT},
    "subagent_start": {**UNIVERSAL, "hookSpecificOutput": CONTEXT},
    "user_prompt_submit": {**UNIVERSAL, **BLOCK, "hookSpecificOutput": CONTEXT},
    "pre_tool": {**UNIVERSAL, "decision": ("approve", "block"), "reason": str,
                 "hookSpecificOutput": {**CONTEXT, "permissionDecision": (
                     "allow", "deny", "ask"), "permissionDecisionReason": str,
                     "updatedInput": object}},
    "permission_request": {**UNIVERSAL, "hookSpecificOutput": {"decision": {
        "behavior": ("allow", "deny"), "interrupt": bool, "message": str,
        "updatedInput": object, "updatedPermissions": object}}},
    "post_tool": {**UNIVERSAL, **BLOCK, "hookSpecificOutput": {
        **CONTEXT, "updatedMCPToolOutput": object}},
    "stop": {**UNIVERSAL, **BLOCK}, "subagent_stop": {**UNIVERSAL, **BLOCK},
    "pre_compact": UNIVERSAL, "post_compact": UNIVERSAL,
    "interrupt": {"systemMessage": str}}


def answer(result: ActionResult, label: str, event: Event, deny_on_error: bool) -> Verdict:
    if result.status in (Status.ERROR, Status.UNTRUSTED):
        blocks = event.blockable and (deny_on_error or result.fails_closed)
        return Verdict(blocks, False, None, f"{label}: {result.error}", None, result.error,
                       permission="deny" if blocks and event.name in PERMISSION else None)
    if result.status == Status.STARTED:
        return Verdict(False, False, None, None, None, result.error)
    if result.exit_code != 0:
        return _exited(result, event)
    data = answers.read(result)  # (Unreadable: the hook's error, verdict.py)
    if data is None:
        text = result.stdout.strip()
        if text and event.name in PLAIN_FAILS:
            return failed(f"plain text on stdout: {NAMES[event.name]} reads only JSON")
        context = text if text and event.name in PLAIN_CONTEXT else None
        return Verdict(False, False, None, None, None, result.error, context=context)
    if event.name not in SCHEMAS:  # (SessionEnd: no output is read)
        return Verdict(False, False, None, None, None, result.error)
    problem = _invalid(data, SCHEMAS[event.name], "") or _hook_event(data, event.name)
    if problem is not None:
        return failed(f"invalid {NAMES[event.name]} JSON output: {problem}")
    return _said(data, event, label)


def failed(why: str) -> Verdict:
    """The hook failed, for Codex: it decides nothing."""
    return Verdict(False, False, None, None, None, why, status=Status.FAILED)


def _exited(result: ActionResult, event: Event) -> Verdict:
    reason = result.stderr.strip()
    if result.exit_code != 2 or event.name not in (*EXIT2, "post_tool"):
        return failed(result.error or f"exit {result.exit_code}")
    if not reason:
        return failed("exit 2 without a reason on stderr")
    if event.name == "post_tool":  # the tool ran: the reason is for the model
        return Verdict(False, False, None, None, reason, result.error)
    return Verdict(True, False, Decision.BLOCK, reason, None, result.error,
                   permission="deny" if event.name in PERMISSION else None)


def _invalid(data: dict[str, Any], schema: dict[str, Any], where: str) -> str | None:
    """Why ``data`` is not valid by ``schema`` (a field absent or null is unset)."""
    for key, value in data.items():
        kind = schema.get(key)
        if kind is None:
            return f"unknown field {where}{key}"
        if value is None or kind is object:
            continue
        if isinstance(kind, dict):
            if not isinstance(value, dict):
                return f"{where}{key}: expected an object"
            inner = {"hookEventName": str, **kind} if key == "hookSpecificOutput" else kind
            problem = _invalid(value, inner, f"{where}{key}.")
            if problem is not None:
                return problem
        elif isinstance(kind, tuple) and value not in kind:
            return f"{where}{key}: expected one of {', '.join(kind)}"
        elif isinstance(kind, type) and (not isinstance(value, kind) or (
                kind is not bool and isinstance(value, bool))):
            return f"{where}{key}: expected {'true or false' if kind is bool else 'text'}"
    return None


def _hook_event(data: dict[str, Any], event: str) -> str | None:
    specific = data.get("hookSpecificOutput")
    if not isinstance(specific, dict):
        return None
    if specific.get("hookEventName") != NAMES[event]:
        return f"hookSpecificOutput.hookEventName: expected {NAMES[event]!r}"
    decision = specific.get("decision")
    if isinstance(decision, dict) and "behavior" not in decision:
        return "hookSpecificOutput.decision.behavior: required"
    return None


def _said(data: dict[str, Any], event: Event, label: str) -> Verdict:
    """A JSON answer valid by the event's schema, as Codex reads it."""
    name, specific = event.name, data.get("hookSpecificOutput") or {}
    common: dict[str, Any] = dict(context=_text(specific.get("additionalContext")),
                                  system_message=_text(data.get("systemMessage")))
    unsupported = _unsupported(data, name)
    if unsupported is not None:
        return failed(f"{NAMES[name]} does not support {unsupported}")
    if name == "pre_tool":
        return _pre_tool(data, specific, common)
    if name == "permission_request":
        return _permission(specific, common)
    reason = _text(data.get("reason"))
    if data.get("continue") is False and name not in ("subagent_start", "interrupt"):
        stop_reason = _text(data.get("stopReason"))
        feedback = (reason or stop_reason or "stopped") if name == "post_tool" else None
        return Verdict(False, False, None, None, feedback, None, continue_=False,
                       stop_reason=stop_reason, **common)
    if data.get("decision") == "block":
        if reason is None:
            return failed("decision: block without a reason")
        if name == "post_tool":  # the tool ran: the reason is for the model
            return Verdict(False, False, Decision.BLOCK, None, reason, None, **common)
        return Verdict(True, False, Decision.BLOCK, reason, None, None, **common)
    if name == "post_tool" and data.get("reason") is not None:
        return failed("reason without decision: block")
    output = specific.get("updatedMCPToolOutput") if name == "post_tool" else None
    return Verdict(False, False, None, None, None, None, **common, updated_output=output)


def _unsupported(data: dict[str, Any], event: str) -> str | None:
    """What Codex's parser refuses on PreToolUse, PermissionRequest (continue: false,
    stopReason, suppressOutput) and PostToolUse (suppressOutput)."""
    if event in PERMISSION:
        if data.get("continue") is False:
            return "continue: false"
        if data.get("stopReason") is not None:
            return "stopReason"
    if event in (*PERMISSION, "post_tool") and data.get("suppressOutput") is True:
        return "suppressOutput"
    return None


def _pre_tool(data: dict[str, Any], specific: dict[str, Any],
              common: dict[str, Any]) -> Verdict:
    decision, updated = specific.get("permissionDecision"), specific.get("updatedInput")
    why = specific.get("permissionDecisionReason")
    if decision is not None or why is not None or updated is not None:
        if updated is not None and (decision != "allow" or not isinstance(updated, dict)):
            return failed("updatedInput is an object, with permissionDecision: allow")
        if decision == "ask" or (decision == "allow" and updated is None):
            return failed(f"permissionDecision: {decision} (without updatedInput)")
        if decision is None:
            return failed("permissionDecisionReason without permissionDecision")
        if decision == "deny":
            if _text(why) is None:
                return failed("permissionDecision: deny without a reason")
            return Verdict(True, False, Decision.BLOCK, _text(why), None, None,
                           permission="deny", **common)
        return Verdict(False, False, Decision.APPROVE, None, None, None, permission="allow",
                       updated_input=updated, **common)
    legacy, reason = data.get("decision"), _text(data.get("reason"))
    if legacy == "approve":
        return failed("decision: approve")
    if legacy == "block" and reason is not None:
        return Verdict(True, False, Decision.BLOCK, reason, None, None, permission="deny",
                       **common)
    if legacy == "block" or data.get("reason") is not None:
        return failed("decision: block and a reason go together")
    return Verdict(False, False, None, None, None, None, **common)


def _permission(specific: dict[str, Any], common: dict[str, Any]) -> Verdict:
    decision = specific.get("decision")
    if not isinstance(decision, dict):
        return Verdict(False, False, None, None, None, None, **common)
    if decision.get("updatedInput") is not None or decision.get(
            "updatedPermissions") is not None or decision.get("interrupt") is True:
        return failed("decision.updatedInput, updatedPermissions and interrupt: true")
    if decision.get("behavior") == "allow":
        return Verdict(False, False, Decision.APPROVE, None, None, None, permission="allow",
                       **common)
    message = _text(decision.get("message")) or "PermissionRequest hook denied approval"
    return Verdict(True, False, Decision.BLOCK, message, None, None, permission="deny",
                   **common)


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None
