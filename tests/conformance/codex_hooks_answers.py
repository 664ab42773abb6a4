"""How Codex reads a hook's answer (exit code, stdout, stderr), for the OpenAI Codex hooks
conformance tests: ``read_answer(event, completed_process)`` gives its meaning, so that a
test asserts on the decision and never on one of several equivalent spellings. Sources:
codex_hooks_support (SRC, events/*.rs ``parse_completed`` and engine/output_parser.rs;
the output schemas of @openai/codex@0.171.0).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from typing import Any

from tests.conformance.codex_hooks_support import schema, validate


@dataclass
class Answer:
    """What Codex makes of a hook's answer (SRC: events/*.rs ``parse_completed``)."""

    event: str
    code: int
    blocked: bool = False  # denied / prompt blocked / stop blocked (continue working)
    reason: str | None = None  # the block's reason, deny message or continuation prompt
    allowed: bool = False  # PermissionRequest "allow"
    stopped: bool = False  # "continue": false
    stop_reason: str | None = None
    context: list[str] = field(default_factory=list)
    feedback: str | None = None  # PostToolUse: told to the model
    updated_input: Any = None
    system_message: str | None = None
    failed: str | None = None  # the hook's answer was an error to Codex (decides nothing)
    json: dict[str, Any] | None = None


def read_answer(event: str, proc: subprocess.CompletedProcess[str]) -> Answer:
    """Codex's reading of exit code, stdout and stderr for ``event``: SRC, events/*.rs
    ``parse_completed`` and engine/output_parser.rs. Exit 0: empty stdout decides nothing;
    JSON is read by the event's output schema (an unknown field, a wrong type, or a field
    the event does not support is the hook's failure, which decides nothing); plain text
    is context for SessionStart, SubagentStart and UserPromptSubmit, an error for Stop,
    SubagentStop and Interrupt, ignored elsewhere. Exit 2 with a reason on stderr blocks
    PreToolUse, PermissionRequest, UserPromptSubmit, Stop and SubagentStop and is feedback
    for PostToolUse; without one, and any other exit, the hook failed."""
    a = Answer(event, proc.returncode)
    out, err = proc.stdout.strip(), proc.stderr.strip()
    if proc.returncode == 2 and event in ("PreToolUse", "PermissionRequest",
                                          "UserPromptSubmit", "Stop", "SubagentStop",
                                          "PostToolUse"):
        if not err:
            a.failed = f"{event} hook exited with code 2 without a reason on stderr"
        elif event == "PostToolUse":
            a.feedback = err
        else:
            a.blocked, a.reason = True, err
        return a
    if proc.returncode != 0:
        a.failed = f"hook exited with code {proc.returncode}"
        return a
    if not out:
        return a
    try:
        data = json.loads(out)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        if out.startswith(("{", "[")) or event in ("Stop", "SubagentStop", "Interrupt"):
            a.failed = f"invalid {event} JSON output"
        elif event in ("SessionStart", "SubagentStart", "UserPromptSubmit"):
            a.context.append(out)
        return a
    if event == "SessionEnd":
        return a
    try:
        validate(data, schema(event, "output"))
    except Exception as error:
        a.failed = f"invalid {event} JSON output: {error}"
        return a
    a.json = data
    _read_json(a, data)
    return a


def _read_json(a: Answer, data: dict[str, Any]) -> None:
    specific = data.get("hookSpecificOutput") or {}
    a.system_message = data.get("systemMessage")
    cont, reason = data.get("continue", True), str(data.get("reason") or "")
    unsupported = {"PreToolUse": ("continue", "stopReason", "suppressOutput"),
                   "PermissionRequest": ("continue", "stopReason", "suppressOutput"),
                   "PostToolUse": ("suppressOutput",)}.get(a.event, ())
    for key in unsupported:
        if key in data and data[key] != {"continue": True}.get(key, False):
            a.failed = f"{a.event} hook returned unsupported {key}"
            return
    if specific.get("additionalContext") is not None:
        a.context.append(specific["additionalContext"])
    if a.event == "PreToolUse":
        _pre_tool_use(a, data, specific)
    elif a.event == "PermissionRequest":
        decision = specific.get("decision")
        if decision is None:
            return
        if decision.get("updatedInput") is not None or decision.get(
                "updatedPermissions") is not None or decision.get("interrupt"):
            a.failed = "PermissionRequest hook returned an unsupported field"
        elif decision["behavior"] == "allow":
            a.allowed = True
        else:
            a.blocked = True
            a.reason = (decision.get("message") or "").strip() or \
                "PermissionRequest hook denied approval"
    elif cont is False and a.event not in ("SubagentStart", "Interrupt"):
        a.stopped, a.stop_reason = True, data.get("stopReason")
        if a.event == "PostToolUse":
            a.feedback = reason.strip() or a.stop_reason or "stopped"
    elif data.get("decision") == "block":
        if not reason.strip():
            a.failed, a.context = f"{a.event} returned decision:block without a reason", []
        elif a.event == "PostToolUse":
            a.feedback = reason.strip()
        else:
            a.blocked, a.reason = True, reason.strip()
    elif a.event == "PostToolUse" and "reason" in data:
        a.failed, a.context = "PostToolUse hook returned reason without decision", []


def _pre_tool_use(a: Answer, data: dict[str, Any], specific: dict[str, Any]) -> None:
    decision, why = specific.get("permissionDecision"), specific.get("permissionDecisionReason")
    why_text = str(why or "").strip()
    updated = specific.get("updatedInput")
    if decision is not None or why is not None or updated is not None:
        if updated is not None and decision != "allow":
            a.failed = "updatedInput without permissionDecision:allow"
        elif (decision == "allow" and updated is None) or decision == "ask":
            a.failed = f"unsupported permissionDecision:{decision}"
        elif decision == "deny" and not why_text:
            a.failed = "permissionDecision:deny without a permissionDecisionReason"
        elif decision is None:
            a.failed = "permissionDecisionReason without permissionDecision"
        elif decision == "deny":
            a.blocked, a.reason = True, why_text
        else:
            a.updated_input = updated
        return
    legacy, reason = data.get("decision"), str(data.get("reason") or "").strip()
    if legacy == "approve":
        a.failed = "unsupported decision:approve"
    elif (legacy == "block" and not reason) or (legacy is None and "reason" in data):
        a.failed = "decision:block without a reason, or a reason without a decision"
    elif legacy == "block":
        a.blocked, a.reason = True, reason
    if a.failed:
        a.context = []
