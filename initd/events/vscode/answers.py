"""What a VS Code hook's answer means, as its Local hooks reference ("Exit codes", "Common
output", each event's "Output") and its harness (chatHookService.ts, toolCallingLoop.ts)
read it: a pure function of the result (verdict.py's Verdict).

- Exit 2: stderr blocks: a PreToolUse is denied, a UserPromptSubmit blocked, a Stop or
  SubagentStop kept working (with stderr as the reason; nothing when stderr is empty); on
  PostToolUse it is the model's feedback (the tool ran); SessionStart, SubagentStart and
  PreCompact ignore it.
- Any other exit, a timeout, a hook that could not run: a warning; nothing decided.
- Exit 0: a JSON object on stdout decides (plain text is ignored): ``continue: false`` or
  a ``stopReason`` stops the agent (not on SessionStart, SubagentStart, PreCompact),
  ``systemMessage``; PreToolUse's ``hookSpecificOutput.permissionDecision`` (deny blocks;
  an invalid value is ignored), ``permissionDecisionReason``, ``updatedInput``;
  PostToolUse's and UserPromptSubmit's top-level ``decision: "block"`` + ``reason``;
  Stop's and SubagentStop's ``hookSpecificOutput.decision: "block"``, only with a
  ``reason``; ``additionalContext``. An answer for another event is not read: a
  top-level ``hookEventName`` of another event drops it all, one in
  ``hookSpecificOutput`` that part (a Stop's answer counts for SubagentStop, a
  SessionStart's for SubagentStart).

initd's own rules stand over VS Code's: a hook that could not load, or a stdout that
starts like a JSON answer and cannot be read, is an error that blocks a blockable event
(invariant 12), where VS Code would go on."""

from __future__ import annotations

from typing import Any

from initd.events import answers
from initd.events.actions import ActionResult, Status
from initd.events.model import EventHook
from initd.events.verdict import Decision, Verdict
from initd.events.vscode.wire import NAMES, NO_STOP
from initd.hooks.kinds import Event

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
