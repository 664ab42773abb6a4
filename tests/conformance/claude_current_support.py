"""Claude Code's hooks as the current reference has them (31 events), for the tests of
``initd emit --from claude``: Claude Code's own stdin payloads in, and a reader of the
answer (exit code, stdout, stderr) that means what Claude Code makes of a hook's answer.

The reference (REF) is https://code.claude.com/docs/en/hooks, the revision of 2026-08-22
(Claude Code v2.1.240; mirrored at github.com/thevibeworks/claude-code-docs, commit
e7cbe5e9, content/en/docs/claude-code/hooks.md). Its types: the JSON Schema derived from
``@anthropic-ai/claude-agent-sdk@0.3.240``'s sdk.d.ts (contracts/claude/README.md).

The hook service, the settings files and the recording hooks are
claude_hooks_support.Session's (the earlier suite's), unchanged.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from tests.conformance.claude_current_payloads import OWN
from tests.conformance.claude_hooks_support import INITD, Session

REF = "https://code.claude.com/docs/en/hooks"
REV = "2026-08-22 (Claude Code v2.1.240)"
CONTRACTS = Path(__file__).parent / "contracts" / "claude"
SCHEMA = CONTRACTS / "claude-agent-sdk-0.3.240.hooks.schema.json"

# The reference's table "The table below summarizes when each event fires", in its order.
ALL_EVENTS = [
    "SessionStart", "Setup", "UserPromptSubmit", "UserPromptExpansion", "PreToolUse",
    "PermissionRequest", "PermissionDenied", "PostToolUse", "PostToolUseFailure",
    "PostToolBatch", "Notification", "MessageDisplay", "SubagentStart", "SubagentStop",
    "TaskCreated", "TaskCompleted", "Stop", "StopFailure", "TeammateIdle",
    "InstructionsLoaded", "ConfigChange", "CwdChanged", "DirectoryAdded", "FileChanged",
    "WorktreeCreate", "WorktreeRemove", "PreCompact", "PostCompact", "Elicitation",
    "ElicitationResult", "SessionEnd",
]

# "Exit code 2 behavior per event", the rows whose "Can block?" is Yes.
CAN_BLOCK = {"PreToolUse", "UserPromptSubmit", "UserPromptExpansion", "Stop", "SubagentStop",
             "TeammateIdle", "TaskCreated", "TaskCompleted", "ConfigChange", "PostToolBatch",
             "PreCompact", "Elicitation", "ElicitationResult", "WorktreeCreate"}
# "Decision control": the events whose top-level `decision: "block"` blocks (PostToolUse's
# and PostToolUseFailure's is feedback next to the result; TaskCreated's cancels the task).
DECISION_BLOCKS = {"UserPromptSubmit", "UserPromptExpansion", "PostToolBatch", "Stop",
                   "SubagentStop", "ConfigChange", "PreCompact", "TaskCreated"}
# Each event's section: "Claude Code discards ... `continue`" (or all JSON output), and
# TaskCreated: "Claude Code ignores `continue: false` from this event".
DISCARDS_CONTINUE = {"InstructionsLoaded", "MessageDisplay", "Notification", "TaskCreated",
                     "StopFailure", "ConfigChange", "CwdChanged", "DirectoryAdded",
                     "FileChanged", "WorktreeCreate", "WorktreeRemove", "PreCompact",
                     "PostCompact", "Elicitation", "ElicitationResult", "SessionEnd"}
DISCARDS_SYSTEM_MESSAGE = {"InstructionsLoaded", "MessageDisplay", "Notification",
                           "ConfigChange", "WorktreeCreate", "WorktreeRemove", "PreCompact",
                           "PostCompact", "Elicitation", "ElicitationResult", "SessionEnd",
                           "StopFailure"}
# "Exit code 0": "The exceptions are `UserPromptSubmit`, `UserPromptExpansion`, and
# `SessionStart`, where Claude Code adds plain-text stdout as context".
PLAIN_TEXT_IS_CONTEXT = {"UserPromptSubmit", "UserPromptExpansion", "SessionStart"}
# "CLAUDE_ENV_FILE is available for SessionStart, Setup, CwdChanged, and FileChanged hooks."
ENV_FILE_EVENTS = ["SessionStart", "Setup", "CwdChanged", "FileChanged"]

def own_fields(event: str) -> dict[str, Any]:
    return copy.deepcopy(OWN[event])


def payload(event: str, cc: Session | None = None, **more: Any) -> dict[str, Any]:
    """What Claude Code writes on a hook's stdin for ``event``: the common fields, then the
    event's own (``more`` added or replacing)."""
    cwd = str(cc.ws) if cc is not None else "/home/u/my-project"
    data: dict[str, Any] = {
        "session_id": "abc123",
        "transcript_path": "/home/u/.claude/projects/p/00893aaf.jsonl",
        "cwd": cwd, "hook_event_name": event, **own_fields(event), **more}
    return data


def emit_from(cc: Session, data: dict[str, Any], event: str | None = None, *,
              socket: str | None = None, env: dict[str, str] | None = None,
              use_flag: bool = False, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``initd emit --from claude [EVENT]`` as Claude Code runs a command hook: the payload
    on stdin, CLAUDE_PROJECT_DIR set, the socket in INITD_SOCKET (or ``--socket`` when
    ``use_flag``)."""
    where = socket if socket is not None else cc.sock
    argv = [*INITD, "emit", "--from", "claude", *([event] if event else [])]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("INITD_", "CLAUDE_"))}
    base.update({"HOME": str(cc.home), "CLAUDE_PROJECT_DIR": str(cc.ws)})
    if use_flag:
        argv += ["--socket", where]
    else:
        base["INITD_SOCKET"] = where
    base.update(env or {})
    return subprocess.run(argv, input=json.dumps(data), capture_output=True, text=True,
                          timeout=timeout, cwd=str(cc.ws), env=base)


@cache
def _definitions() -> dict[str, Any]:
    defs: dict[str, Any] = json.loads(SCHEMA.read_text())["definitions"]
    return defs


def schema_errors(instance: object, definition: str) -> list[str]:
    """What makes ``instance`` invalid as the SDK type ``definition`` ([] when valid)."""
    validator = jsonschema.Draft7Validator({"$ref": f"#/definitions/{definition}",
                                            "definitions": _definitions()})
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(instance)]


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class Answer:
    """What Claude Code makes of one command hook's exit code, stdout and stderr."""

    event: str
    code: int
    stdout: str
    stderr: str
    json: dict[str, Any] | None = None
    blocked: bool = False  # the action the event guards does not happen (or Stop continues)
    reason: str | None = None  # the blocking message
    permission: str | None = None  # PreToolUse: allow/deny/ask/defer
    request: dict[str, Any] | None = None  # PermissionRequest: the decision object
    context: list[str] = field(default_factory=list)  # what reaches Claude's context
    feedback: str | None = None  # PostToolUse(Failure): what Claude is shown beside the result
    stop: bool = False  # continue: false, where the event honours it
    stop_reason: str | None = None
    system_message: str | None = None
    specific: dict[str, Any] = field(default_factory=dict)  # hookSpecificOutput
    action: str | None = None  # Elicitation / ElicitationResult
    worktree_path: str | None = None
    error: bool = False  # a non-blocking error (the action proceeds, a notice is shown)
    problems: list[str] = field(default_factory=list)  # invalid by Claude Code's rules

    def describe(self) -> str:
        return (f"{self.event}: exit {self.code}\n--- stdout ---\n{self.stdout}"
                f"--- stderr ---\n{self.stderr}")


def read_answer(event: str, proc: subprocess.CompletedProcess[str]) -> Answer:
    """Claude Code's reading of a command hook's answer (REF "Exit code output", "JSON
    output", "Decision control" and each event's section)."""
    a = Answer(event, proc.returncode, proc.stdout, proc.stderr)
    text = proc.stdout.lstrip()
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            a.json = parsed
    if event == "WorktreeCreate":  # "path return": the last non-empty line of stdout
        lines = [ANSI.sub("", line).strip() for line in proc.stdout.splitlines()]
        lines = [line for line in lines if line]
        if proc.returncode != 0 or not lines:
            a.blocked, a.reason = True, proc.stderr.strip() or "no path"
        else:
            a.worktree_path = lines[-1]
        return a
    if event == "StopFailure":  # "Output and exit code are ignored, except terminalSequence"
        return a
    valid = a.json is not None and not (problems := schema_errors(a.json, "SyncHookJSONOutput"))
    if a.json is not None and not valid:
        a.problems += problems
    if a.json is not None:
        hso = a.json.get("hookSpecificOutput")
        if isinstance(hso, dict) and hso.get("hookEventName") != event:
            a.problems.append(f"hookSpecificOutput.hookEventName is "
                              f"{hso.get('hookEventName')!r}, not {event!r}")
            valid = False
    if proc.returncode == 2:
        if event in ("PostToolUse", "PostToolUseFailure"):
            a.feedback = proc.stderr.strip()
        elif event in ("Elicitation", "ElicitationResult"):
            # "an exit-2 hook's hookSpecificOutput is ignored"; "Denies the elicitation" /
            # "the effective action [becomes] decline"
            a.blocked, a.action = True, "decline"
            return a
        elif event in CAN_BLOCK:
            a.blocked = True
    elif not valid:
        if proc.returncode != 0 or a.json is not None:
            a.error = True
        elif event in PLAIN_TEXT_IS_CONTEXT and proc.stdout.strip():
            a.context.append(proc.stdout.strip())
    if valid and a.json is not None:
        _read_json(a, a.json)
    if proc.returncode == 2 and event == "PreToolUse":  # "routes the same way as "deny""
        a.permission = "deny"
    if a.blocked and a.reason is None:
        a.reason = proc.stderr.strip()
    return a


def _read_json(a: Answer, obj: dict[str, Any]) -> None:
    event = a.event
    hso = obj.get("hookSpecificOutput")
    a.specific = hso if isinstance(hso, dict) else {}
    if obj.get("continue") is False and event not in DISCARDS_CONTINUE:
        a.stop, a.stop_reason = True, obj.get("stopReason")
    if isinstance(obj.get("systemMessage"), str) and event not in DISCARDS_SYSTEM_MESSAGE:
        a.system_message = obj["systemMessage"]
    context = a.specific.get("additionalContext")
    if isinstance(context, str):
        a.context.append(context)
    decision, reason = obj.get("decision"), obj.get("reason")
    if event == "PreToolUse":
        old = {"approve": "allow", "block": "deny"}.get(str(decision))
        a.permission = a.specific.get("permissionDecision") or old
        if a.permission == "deny":
            a.blocked = True
            a.reason = a.specific.get("permissionDecisionReason") or reason or a.reason
    elif event == "PermissionRequest":
        request = a.specific.get("decision")
        a.request = request if isinstance(request, dict) else None
        if a.request is not None and a.request.get("behavior") == "deny":
            a.blocked, a.reason = True, a.request.get("message")
    elif event in ("PostToolUse", "PostToolUseFailure"):
        if decision == "block":
            a.feedback = "\n".join(x for x in (a.feedback, reason) if x)
    elif event in ("Elicitation", "ElicitationResult"):
        a.action = a.specific.get("action")
    elif decision == "block" and event in DECISION_BLOCKS:
        a.blocked, a.reason = True, reason if reason is not None else a.reason
    if event == "PostToolBatch" and a.stop:  # "stops the agentic loop before the next model call"
        a.blocked, a.reason = True, a.reason or a.stop_reason


def shim_command() -> str:
    """The hook command a test writes by hand to route an event to initd (the interface's
    own line: ``initd emit --from claude``), with this interpreter."""
    return f"{sys.executable} -m initd emit --from claude"
