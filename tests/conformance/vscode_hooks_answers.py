"""How VS Code's Local harness reads a hook's answer (exit code, stdout, stderr), for the VS
Code hooks conformance tests: ``read_answer(event, completed_process)`` gives its meaning,
so that a test asserts on the decision and never on one of several equivalent spellings.

Sources (vscode_hooks_support): LOCAL "Exit codes", "Common output" and each event's
"Output"; SRC chatHookService.ts ``_toHookResult``/``executePreToolUseHook``/
``executePostToolUseHook``, hookExecutor.ts, hookResultProcessor.ts
``processHookResults``, toolCallingLoop.ts ``executeStopHook``/``executeSubagentStopHook``/
``executeSessionStartHook``/``executeSubagentStartHook``, defaultIntentRequestHandler.ts
(UserPromptSubmit) and the summarizer (PreCompact).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from typing import Any

from tests.conformance.vscode_hooks_support import schema, validate

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# SRC: "compatibleHookEventNames": a Stop answer counts for SubagentStop, SessionStart's
# for SubagentStart (one way).
COMPATIBLE = {("Stop", "SubagentStop"), ("SessionStart", "SubagentStart")}


@dataclass
class Answer:
    """What the Local harness makes of one hook's answer."""

    event: str
    code: int
    kind: str = "success"  # success (exit 0), error (exit 2), warning (any other exit)
    decision: str | None = None  # PreToolUse allow/deny/ask; block elsewhere
    reason: str | None = None
    context: list[str] = field(default_factory=list)
    stop: bool = False  # continue: false (or a stopReason): the agent stops
    stop_reason: str | None = None
    system_message: str | None = None  # a warning shown to the user
    warning: str | None = None  # a non-blocking error's stderr
    updated_input: Any = None
    json: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)  # not valid by VS Code's rules


def read_answer(event: str, proc: subprocess.CompletedProcess[str]) -> Answer:
    """LOCAL "Exit codes": "`0` Treat the command as successful and process stdout. `2`
    Treat stderr as a blocking error and provide it to the model. Any other value Show a
    non-blocking warning to the user and continue processing." SRC: exit 2 denies a
    PreToolUse ("Tried to use TOOL - stderr"), blocks a PostToolUse, aborts a
    UserPromptSubmit, blocks Stop/SubagentStop with stderr as the reason (nothing if
    stderr is empty), and is ignored on SessionStart, SubagentStart and PreCompact."""
    a = Answer(event, proc.returncode)
    out, err = proc.stdout.strip(), ANSI.sub("", proc.stderr).strip()
    if proc.returncode == 2:
        a.kind, a.reason = "error", err or None
        if event == "PreToolUse":
            a.decision = "deny"
        elif event in ("PostToolUse", "UserPromptSubmit") or (
                event in ("Stop", "SubagentStop") and err):
            a.decision = "block"
        return a
    if proc.returncode != 0:
        a.kind, a.warning = "warning", err
        return a
    if not out:
        return a
    try:
        data = json.loads(out)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        # SRC hookExecutor: "Hook command returned non-JSON output" (a warning, ignored).
        a.problems.append(f"stdout on exit 0 is not a JSON object: {out[:200]!r}")
        return a
    a.json = data
    _read_json(a, data)
    return a


def _compatible(name: object, event: str) -> bool:
    return name is None or name == event or (name, event) in COMPATIBLE


def _read_json(a: Answer, data: dict[str, Any]) -> None:
    event = a.event
    try:
        validate(data, schema("hook-output", event))
    except Exception as error:  # any schema error is a problem to show
        a.problems.append(f"not valid by hook-output.schema.json#{event}: {error}")
    if isinstance(data.get("systemMessage"), str):
        a.system_message = data["systemMessage"]
    if not _compatible(data.get("hookEventName"), event):  # SRC: the whole result dropped
        a.problems.append(f"top-level hookEventName {data['hookEventName']!r} for {event}")
        return
    # SRC _toHookResult: a stopReason string, or `continue: false`, stops the agent
    # (ignored on SessionStart, SubagentStart and PreCompact).
    stops = data.get("continue") is False or isinstance(data.get("stopReason"), str)
    if stops and event not in ("SessionStart", "SubagentStart", "PreCompact"):
        a.stop, a.stop_reason = True, data.get("stopReason") or ""
    specific = data.get("hookSpecificOutput")
    if specific is not None and not isinstance(specific, dict):
        a.problems.append("hookSpecificOutput is not an object")
        specific = None
    if specific is not None and not _compatible(specific.get("hookEventName"), event):
        a.problems.append(f"hookSpecificOutput.hookEventName "
                          f"{specific.get('hookEventName')!r} for {event}: ignored")
        specific = None
    specific = specific or {}
    if isinstance(specific.get("additionalContext"), str) and specific["additionalContext"]:
        a.context.append(specific["additionalContext"])
    if event == "PreToolUse":
        decision = specific.get("permissionDecision")
        if decision in ("allow", "deny", "ask"):
            a.decision, a.reason = decision, specific.get("permissionDecisionReason")
        elif decision is not None:
            a.problems.append(f"invalid permissionDecision {decision!r}: ignored")
        if isinstance(specific.get("updatedInput"), dict):
            a.updated_input = specific["updatedInput"]
    elif event in ("PostToolUse", "UserPromptSubmit"):
        if data.get("decision") == "block":
            a.decision, a.reason = "block", data.get("reason")
        elif data.get("decision") is not None:
            a.problems.append(f"invalid {event} decision {data['decision']!r}: ignored")
        if event == "UserPromptSubmit" and isinstance(data.get("additionalContext"), str):
            a.context.append(data["additionalContext"])
    elif event in ("Stop", "SubagentStop"):
        # SRC reads hookSpecificOutput.decision/reason only, and a block needs a reason.
        if specific.get("decision") == "block" and specific.get("reason"):
            a.decision, a.reason = "block", specific["reason"]
        elif data.get("decision") == "block" and not specific.get("decision"):
            a.problems.append(f"a top-level decision on {event} is not read by VS Code "
                              "(SRC reads hookSpecificOutput.decision)")


def blocked(a: Answer) -> bool:
    """The event's documented "blocked": a denied tool call (PreToolUse), a blocked result
    (PostToolUse), a prompt not sent (UserPromptSubmit: a block, or the stop it aborts
    with), an agent kept running (Stop, SubagentStop)."""
    if a.event == "PreToolUse":
        return a.decision == "deny"
    if a.event == "UserPromptSubmit":
        return a.decision == "block" or a.stop
    return a.decision == "block"


def assert_valid(a: Answer) -> None:
    """The answer is one VS Code reads as meant: on exit 0, stdout empty or a JSON object
    valid for the event, with no field VS Code would drop."""
    assert not a.problems, f"{a.event}: {a.problems}"
