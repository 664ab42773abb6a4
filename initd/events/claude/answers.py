"""What a Claude Code hook's answer means, per event, as https://code.claude.com/docs/en/hooks
(the revision of 2026-08-22, Claude Code v2.1.240) gives it ("Exit code output", "JSON
output", "Decision control" and each event's section): a pure function of its result
(verdict.py makes it a Verdict).

- Exit 0: stdout is parsed as JSON when it is an object; else, on UserPromptSubmit,
  UserPromptExpansion and SessionStart, it is context for the model.
- Exit 2: stderr blocks an event that can block as its reason, unless its JSON makes a
  blocking decision with a reason of its own (that reason, then); it is feedback for the
  model on PostToolUse and PostToolUseFailure (the tool already ran), and for the user
  only elsewhere (a failure, nothing blocked). On PermissionRequest it decides nothing
  ("Exit code 2 isn't honored for this event"): only a ``decision`` object does.
- Any other exit: a JSON object on stdout decides as on exit 0 ("Claude Code reads JSON
  output fields from stdout on every exit code"); else a non-blocking error, as are a
  timeout and a hook that could not run. WorktreeCreate: any non-zero exit fails it, and
  its answer is the path on stdout's last non-empty line; StopFailure: "Output and exit
  code are ignored, except terminalSequence".
- JSON: ``continue: false`` + ``stopReason`` (stop the agent; it wins over a block; the
  16 events of NO_CONTINUE discard it), ``suppressOutput``, ``systemMessage``,
  ``decision: "block"`` + ``reason`` (PostToolUse: feedback; elsewhere a block where one
  is possible), PreToolUse's ``hookSpecificOutput.permissionDecision`` allow | ask | defer
  | deny (deny blocks) with ``permissionDecisionReason`` and ``updatedInput`` (the
  deprecated ``decision`` approve | block is allow | deny), PermissionRequest's
  ``decision`` object, Elicitation's ``action`` (decline and cancel are its "no"),
  ``hookSpecificOutput.additionalContext``, and each event's own fields initd hands back
  untouched (claude/relayed.py).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from initd.events import answers
from initd.events.actions import ActionResult, Status
from initd.events.claude import relayed
from initd.events.claude.names import ELICITATIONS, NO_CONTINUE
from initd.events.verdict import PERMISSIONS
from initd.hooks.kinds import Event

# plain stdout is context ("Exit code 0": "The exceptions are UserPromptSubmit,
# UserPromptExpansion, and SessionStart")
PLAIN_CONTEXT = ("user_prompt_submit", "user_prompt_expansion", "session_start")
FEEDBACK = ("post_tool", "post_tool_failure")  # a block is feedback: the tool already ran
PERMISSION_EVENTS = ("pre_tool", "permission_request")  # a block is a deny
DEPRECATED = {"approve": "allow", "block": "deny"}  # PreToolUse's old decision
NO_EXIT_2 = ("exit 2 is not honoured on PermissionRequest: only a decision object grants "
             "or denies")


class Answer(NamedTuple):
    blocks: bool
    decision: str | None  # block | approve (the result's decision)
    reason: str | None
    feedback: str | None  # for the model, nothing blocked (PostToolUse)
    note: str | None  # why it did not count as it asked, or what went wrong
    permission: str | None = None  # PreToolUse: allow | ask | defer | deny
    context: str | None = None  # additional context for the model
    system_message: str | None = None  # for the user
    continue_: bool | None = None  # False: stop the agent
    stop_reason: str | None = None
    updated_input: dict[str, Any] | None = None  # PreToolUse: the tool's new input
    suppress: bool = False  # suppressOutput: the result's stdout is not shown
    updated_output: Any = None  # PostToolUse: what the model sees of the tool's output
    relayed: dict[str, Any] | None = None  # the event's own fields, handed back


def answer(result: ActionResult, label: str, event: Event, deny_on_error: bool) -> Answer:
    if result.status in (Status.ERROR, Status.UNTRUSTED):
        blocks = event.blockable and (deny_on_error or result.fails_closed)
        return Answer(blocks, None, f"{label}: {result.error}", None, result.error,
                      permission="deny" if blocks and event.name in PERMISSION_EVENTS else None)
    if result.status == Status.STARTED:
        return Answer(False, None, None, None, result.error)
    if event.name == "stop_failure":
        return _ignored(result)
    if event.name == "worktree_create":
        return _worktree(result, label)
    if result.exit_code not in (0, 2):  # JSON decides, else a non-blocking error
        data = answers.read(result)  # (Unreadable: the hook's error, verdict.py)
        if data is None:
            return Answer(False, None, None, None, result.error)
        return _structured(data, label, event, result.error)
    if result.exit_code == 2:
        return _exit_2(result, label, event)
    data = answers.read(result)  # (Unreadable: the hook's error, verdict.py)
    if data is None:
        text = result.stdout.strip()
        return Answer(False, None, None, None, result.error,
                      context=text if text and event.name in PLAIN_CONTEXT else None)
    return _structured(data, label, event, result.error)


def _exit_2(result: ActionResult, label: str, event: Event) -> Answer:
    if event.name == "permission_request":  # the decision object alone decides
        data = _readable(result)
        specific = (data or {}).get("hookSpecificOutput")
        if data is not None and isinstance(specific, dict) and "decision" in specific:
            return _structured(data, label, event, result.error)
        return Answer(False, None, None, None, result.error or NO_EXIT_2)
    said = _blocking_reason(result, event) or result.stderr.strip() or \
        f"{label} exited 2 and said nothing on stderr"
    if event.name in FEEDBACK:
        return Answer(False, None, None, said, result.error)
    if event.blockable:  # on PreToolUse, the same as a deny
        return Answer(True, None, said, None, result.error,
                      permission="deny" if event.name in PERMISSION_EVENTS else None)
    return Answer(False, None, None, None, result.error or f"exit 2, but "
                  f"{event.name} cannot be blocked: stderr is for the user only")


def _ignored(result: ActionResult) -> Answer:
    """StopFailure: "Claude Code ignores the hook's output and exit code, apart from
    terminalSequence"."""
    data = _readable(result)
    sequence = (data or {}).get(relayed.TERMINAL)
    return Answer(False, None, None, None, result.error, relayed={
        relayed.TERMINAL: sequence} if isinstance(sequence, str) else None)


def _worktree(result: ActionResult, label: str) -> Answer:
    """WorktreeCreate: "the hook's success or failure determines the outcome" and its
    answer is a path: a command hook's last non-empty line of stdout, an http hook's
    ``worktreePath``. "Any non-zero exit code causes worktree creation to fail"; "If the
    hook fails or produces no path, worktree creation fails"."""
    if result.exit_code != 0:
        why = result.stderr.strip() or f"{label} exited {result.exit_code}"
        return Answer(True, None, why, None, result.error)
    data = _readable(result)
    specific = (data or {}).get("hookSpecificOutput")
    path = specific.get("worktreePath") if isinstance(specific, dict) else None
    path = path if isinstance(path, str) and path else relayed.worktree_path(result.stdout)
    if path is None:
        return Answer(True, None, f"{label} printed no worktree path", None, result.error)
    return Answer(False, None, None, None, result.error, relayed={"worktreePath": path})


def _readable(result: ActionResult) -> dict[str, Any] | None:
    try:
        return answers.read(result)
    except answers.Unreadable:
        return None


def _blocking_reason(result: ActionResult, event: Event) -> str | None:
    """Exit 2's message, when its JSON makes a blocking decision: "The blocking message is
    the reason from your JSON's blocking decision when it makes one, and your stderr text
    otherwise" (an answer that cannot be read is no reason: exit 2 blocks all the same)."""
    data = _readable(result)
    if data is None:
        return None
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    if event.name == "pre_tool" and specific.get("permissionDecision") == "deny":
        return _text(specific.get("permissionDecisionReason"))
    return _text(data.get("reason")) if data.get("decision") in ("block", "deny") else None


def _structured(data: dict[str, Any], label: str, event: Event, note: str | None) -> Answer:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    decision, reason = data.get("decision"), _text(data.get("reason"))
    keep = data.get("continue") if isinstance(data.get("continue"), bool) else None
    if event.name in NO_CONTINUE:
        note, keep = (note or "continue: false is not read on this event"
                      if keep is False else note), None
    handed, dropped = relayed.relayed(event.name, data, specific)
    common: dict[str, Any] = dict(
        context=_text(specific.get("additionalContext")),
        system_message=_text(data.get("systemMessage")), continue_=keep,
        stop_reason=_text(data.get("stopReason")) if keep is False else None,
        suppress=data.get("suppressOutput") is True, relayed=handed)
    note = note or dropped
    if event.name == "pre_tool":
        return _pre_tool(specific, decision, reason, label, note, common)
    if event.name == "permission_request":
        return _permission_request(specific, label, note, common)
    action = (handed or {}).get("action")
    if event.name in ELICITATIONS and action in ("decline", "cancel"):
        return Answer(True, None, f"{label}: {action}", None, note, **common)
    output = specific.get("updatedToolOutput")
    if output is not None and event.name == "post_tool":
        common["updated_output"] = output
    if decision != "block":
        return Answer(False, None, None, None, note, **common)
    said = reason or f"blocked by {label}"
    if event.name in FEEDBACK:
        return Answer(False, "block", None, said, note, **common)
    if event.blockable and event.name not in ELICITATIONS:  # (their "no" is an action)
        return Answer(True, "block", said, None, note, **common)
    return Answer(False, "block", None, None, note or f"decision: block, but {event.name} "
                  "cannot be blocked", **common)


def _pre_tool(specific: dict[str, Any], decision: object, reason: str | None, label: str,
              note: str | None, common: dict[str, Any]) -> Answer:
    """``permissionDecision`` allow | ask | defer | deny ("precedence is deny > defer >
    ask > allow"), or the deprecated top-level ``decision`` approve | block."""
    permission = specific.get("permissionDecision")
    why = _text(specific.get("permissionDecisionReason"))
    if permission is None and isinstance(decision, str) and decision in DEPRECATED:
        permission, why = DEPRECATED[str(decision)], why or reason
    if permission not in PERMISSIONS:
        note = note or (f"permissionDecision {permission!r}: not allow, ask, defer or deny: "
                        "ignored" if permission is not None else None)
        permission = None
    updated = specific.get("updatedInput")
    denies = permission == "deny"
    return Answer(denies, {"deny": "block", "allow": "approve"}.get(str(permission)),
                  why or (f"denied by {label}" if denies else None), None, note,
                  permission=permission, **common,
                  updated_input=updated if isinstance(updated, dict) else None)


def _permission_request(specific: dict[str, Any], label: str, note: str | None,
                        common: dict[str, Any]) -> Answer:
    """PermissionRequest's ``decision``: ``behavior`` allow (with ``updatedInput``) or
    deny (with ``message``); anything else is no answer (the dialog is shown)."""
    decision = specific.get("decision")
    decision = decision if isinstance(decision, dict) else {}
    behavior = decision.get("behavior")
    if behavior not in ("allow", "deny"):
        return Answer(False, None, None, None, note or (
            f"decision.behavior {behavior!r}: not allow or deny: ignored"
            if behavior is not None else None), **common)
    updated = decision.get("updatedInput")
    denies = behavior == "deny"
    return Answer(denies, "block" if denies else "approve",
                  (_text(decision.get("message")) or f"denied by {label}") if denies else None,
                  None, note, permission=behavior, **common,
                  updated_input=updated if isinstance(updated, dict) else None)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
