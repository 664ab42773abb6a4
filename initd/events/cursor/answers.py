"""What a Cursor hook's answer means, per event, as Cursor's hooks reference
(https://cursor.com/docs/agent/hooks, revision of 2026-08-24) gives it:

- "Exit code `0` - Hook succeeded, use the JSON output"; "Exit code `2` - Block the action
  (equivalent to returning `permission: "deny"`)"; "Other exit codes - Hook failed,
  action proceeds (fail-open by default)", as do a timeout and stdout that is no JSON:
  "hook failures (crash, timeout, invalid JSON) allow the action through", unless the
  hook says ``failClosed: true`` (its ``on_error: deny`` here): then they block it. Only
  the events whose answer can stop an action are blocked so (names.GUARDS); exit 2
  elsewhere blocks nothing.
- ``permission`` allow | deny | ask (preToolUse, subagentStart, beforeShellExecution,
  beforeMCPExecution, beforeReadFile, beforeTabFileRead), with ``user_message`` (the
  reason) and ``agent_message`` (for the model); subagentStart's ``ask`` "is treated as
  deny"; preToolUse's ``updated_input``. Claude Code's spellings are read too (Cursor's
  third-party hooks page, "Response Format Compatibility": ``hookSpecificOutput``'s
  ``permissionDecision`` and ``permissionDecisionReason``, ``decision: "block"`` +
  ``reason`` on stop and subagentStop).
- beforeSubmitPrompt's ``continue: false`` blocks the prompt; stop's and subagentStop's
  non-empty ``followup_message`` is a block (initd's word for "go on with this");
  sessionStart's and postToolUse's ``additional_context`` is context for the model,
  preCompact's ``user_message`` a message for the user. sessionStart's ``continue`` is
  not read ("Session creation is not blocked even when `continue` is `false`").

A stdout that starts like a JSON answer and cannot be read is the hook's error and blocks
(initd's invariant 12, verdict.py), failClosed or not: a deviation from "invalid JSON
... allow the action through", where an answer was meant and could not be read."""

from __future__ import annotations

from typing import Any

from initd.events import answers
from initd.events.actions import ActionResult, Status
from initd.events.cursor.names import (
    ASKS,
    FOLLOW_UPS,
    GATHERED,
    GUARDS,
    PERMISSION,
    own_event,
)
from initd.events.model import EventHook
from initd.events.variables import exportable
from initd.events.verdict import Decision, Verdict
from initd.hooks.kinds import Event

PERMISSIONS = ("allow", "ask", "deny")
# Cursor's variables (dialects/cursor.py sets them), never a sessionStart hook's
OWN = ("CURSOR_PROJECT_DIR", "CLAUDE_PROJECT_DIR", "CURSOR_VERSION", "CURSOR_USER_EMAIL",
       "CURSOR_TRANSCRIPT_PATH")


def answer(result: ActionResult, hook: EventHook, event: Event) -> Verdict:
    """``result``'s meaning; answers.Unreadable when its JSON answer cannot be read."""
    own = own_event(hook.key)
    guard = event.blockable and (own in GUARDS if own is not None else True)
    closed = hook.on_error == "deny"
    if result.status in (Status.ERROR, Status.UNTRUSTED):
        return _failed(guard and (closed or result.fails_closed), hook, result.error, own)
    if result.status == Status.STARTED:
        return Verdict(False, False, None, None, None, result.error)
    if result.exit_code == 2:
        said = result.stderr.strip() or result.stdout.strip() or \
            f"{hook.label} exited 2 and said nothing on stderr"
        if not guard:
            return Verdict(False, False, None, None, None, result.error or (
                f"exit 2, but Cursor's {own or event.name} cannot be blocked"))
        return Verdict(True, False, Decision.BLOCK, said, None, result.error,
                       permission="deny" if own in PERMISSION else None)
    if result.exit_code != 0:
        return _failed(guard and closed, hook, f"exit {result.exit_code} (a hook failure "
                       "to Cursor: the action goes ahead unless failClosed)", own)
    data = answers.read(result)
    if data is None:
        if result.stdout.strip():
            return _failed(guard and closed, hook, "its stdout is no JSON (a hook failure "
                           "to Cursor: the action goes ahead unless failClosed)", own)
        return Verdict(False, False, None, None, None, result.error)
    return _structured(data, hook, own, event, guard)


def _failed(blocks: bool, hook: EventHook, why: str | None, own: str | None) -> Verdict:
    reason = f"{hook.label}: {why}"
    return Verdict(blocks, False, Decision.BLOCK if blocks else None,
                   reason if blocks else None, None, why,
                   permission="deny" if blocks and own in PERMISSION else None)


def _structured(data: dict[str, Any], hook: EventHook, own: str | None, event: Event,
                guard: bool) -> Verdict:
    if own in PERMISSION:
        return _permission(data, hook, own or "", guard)
    nested = data.get("hookSpecificOutput")
    nested = nested if isinstance(nested, dict) else {}
    context = _text(data.get("additional_context")) or _text(nested.get("additionalContext"))
    common: dict[str, Any] = {
        "context": context if own in ("sessionStart", "postToolUse") else None,
        "system_message": _text(data.get("user_message")) if own == "preCompact" else None}
    if own == "postToolUse" and data.get("updated_mcp_tool_output") is not None:
        common["updated_output"] = data["updated_mcp_tool_output"]
    if own in GATHERED:  # (sessionStart's env, workspaceOpen's pluginPaths: for the wire)
        given = data.get(GATHERED[own])
        given = session_env(given) if own == "sessionStart" else given if isinstance(
            given, list) else None
        common["specific"] = {GATHERED[own]: given} if given else None
    if own == "beforeSubmitPrompt" and (data.get("continue") is False
                                        or data.get("decision") == "block"):
        why = _text(data.get("user_message")) or _text(data.get("reason")) or \
            f"the prompt was stopped by {hook.label}"
        return Verdict(guard, False, Decision.BLOCK, why if guard else None, None, None,
                       **common)
    if own in FOLLOW_UPS:
        follow = _text(data.get("followup_message")) or (
            _text(data.get("reason")) if data.get("decision") == "block" else None)
        if follow is not None and event.blockable:
            return Verdict(True, False, Decision.BLOCK, follow, None, None, **common)
    return Verdict(False, False, None, None, None, None, **common)


def _permission(data: dict[str, Any], hook: EventHook, own: str, guard: bool) -> Verdict:
    nested = data.get("hookSpecificOutput")
    nested = nested if isinstance(nested, dict) else {}
    said = data.get("permission", nested.get("permissionDecision"))
    user = _text(data.get("user_message")) or _text(nested.get("permissionDecisionReason"))
    agent = _text(data.get("agent_message"))
    note = None
    if said == "ask" and own not in ASKS:  # subagentStart: "treated as deny"
        said, note = "deny", f"permission ask: {own} cannot ask, so it is a deny"
    if said is not None and said not in PERMISSIONS:
        note, said = f"permission {said!r}: not allow, deny or ask: ignored", None
    updated = data.get("updated_input", nested.get("updatedInput"))
    updated = updated if isinstance(updated, dict) and own == "preToolUse" else None
    if said == "deny" and guard:
        return Verdict(True, False, Decision.BLOCK, user or agent or f"denied by {hook.label}",
                       agent, note, permission="deny", updated_input=updated)
    return Verdict(False, False, Decision.APPROVE if said == "allow" else None,
                   user or agent if said == "ask" else None, None, note,
                   permission=said if said in ("allow", "ask") else None,
                   updated_input=updated)


def session_env(value: object) -> dict[str, str]:
    """sessionStart's ``env`` ("Environment variables to set for this session. Available
    to all subsequent hook executions"), less what would change what another hook's
    process loads or runs, or who it thinks it is (variables.exportable: ``BASH_ENV``,
    ``LD_PRELOAD``, ``PATH``…), and Cursor's own variables."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)
            and k and "=" not in k and "\0" not in k + v and exportable(k) and k not in OWN}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
