"""How Gemini CLI reads a hook's answer (its exit code, stdout and stderr), so that a test
asserts the meaning of initd's answer and not one of its spellings; and how Claude Code
reads a PreToolUse answer, for the cross-agent tests.

Reference: https://geminicli.com/docs/hooks/reference "Global hook mechanics" and "Common
output fields" (docs/hooks/reference.md as shipped in @google/gemini-cli@0.61.0 = gemini-cli
git 5411f113, 2026-08-21); the engine that reads answers, @google/gemini-cli-core@0.61.0
dist/src/hooks/hookRunner.js (executeCommandHook, convertPlainTextToHookOutput) and
types.js (DefaultHookOutput)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from typing import Any

DECISIONS = ("ask", "block", "deny", "approve", "allow")  # HookDecision, types.d.ts


@dataclass
class Answer:
    """What a hook's exit code, stdout and stderr mean to Gemini CLI."""

    code: int
    stdout: str
    stderr: str
    blocked: bool = False  # decision deny/block, or exit 2
    reason: str = ""  # the rejection reason (exit 2: stderr)
    stop: bool = False  # continue: false
    stop_reason: str = ""
    decision: str | None = None
    system_message: str | None = None
    context: str | None = None  # hookSpecificOutput.additionalContext
    tool_input: dict[str, Any] | None = None  # hookSpecificOutput.tool_input
    specific: dict[str, Any] = field(default_factory=dict)  # hookSpecificOutput
    warning: bool = False  # "Other: Warning. A non-fatal failure occurred"
    output: dict[str, Any] | None = None  # the JSON object on stdout
    problems: list[str] = field(default_factory=list)  # what Gemini's rules forbid

    @property
    def valid(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        return (f"exit {self.code}, stdout {self.stdout[:600]!r}, stderr "
                f"{self.stderr[:600]!r}, problems {self.problems}")


def read_answer(event: str, done: subprocess.CompletedProcess[str]) -> Answer:
    """Gemini CLI's reading of a hook's answer to ``event`` (REFERENCE "Global hook
    mechanics": "0: Success. stdout is parsed as JSON. 2: System Block. The action is
    blocked; stderr is used as the rejection reason. Other: Warning."; "Your script must
    not print any plain text to stdout other than the final JSON").

    An answer both readings of Gemini agree on is valid: the documentation's and that of
    the real engine (CORE hookRunner.js parses ``stdout || stderr`` as JSON whatever the
    exit code, and reads text on any exit but 0 and 1 as a deny). So exit 2 must leave
    stdout empty and give its reason on stderr, and exit codes other than 0, 1 and 2 are a
    problem (the documentation says warning, the engine blocks)."""
    answer = Answer(done.returncode, done.stdout, done.stderr)
    out, err = done.stdout.strip(), done.stderr.strip()
    if done.returncode == 2:
        answer.blocked, answer.reason = True, err
        if out:
            answer.problems.append("exit 2 with stdout: the engine reads that JSON instead "
                                   "of blocking with stderr")
        if not err:
            answer.problems.append("exit 2 with an empty stderr: no reason (the engine "
                                   "does not block an answer with no output)")
        return answer
    if done.returncode != 0:
        answer.warning = True
        if done.returncode != 1:
            answer.problems.append(f"exit {done.returncode}: a warning by the reference, "
                                   "a deny by the engine")
        return answer
    if not out:
        return answer
    try:
        data = json.loads(out)
    except ValueError:
        answer.problems.append("stdout on exit 0 is not only JSON")
        answer.system_message = out  # index.md: "default to Allow ... a systemMessage"
        return answer
    if not isinstance(data, dict):
        answer.problems.append(f"stdout on exit 0 is JSON but not an object: {data!r}")
        return answer
    answer.output = data
    _read_fields(event, data, answer)
    return answer


def _read_fields(event: str, data: dict[str, Any], answer: Answer) -> None:
    kinds = {"continue": bool, "stopReason": str, "suppressOutput": bool,
             "systemMessage": str, "decision": str, "reason": str, "hookSpecificOutput": dict}
    for key, kind in kinds.items():
        if key in data and not isinstance(data[key], kind):
            answer.problems.append(f"{key} is not a {kind.__name__}: {data[key]!r}")
    decision = data.get("decision")
    if decision is not None and decision not in DECISIONS:
        answer.problems.append(f"decision {decision!r} is none of {DECISIONS}")
    answer.decision = decision if isinstance(decision, str) else None
    answer.blocked = answer.decision in ("deny", "block")
    reason, stop_reason = data.get("reason"), data.get("stopReason")
    answer.reason = reason if isinstance(reason, str) else ""
    answer.stop = data.get("continue") is False
    answer.stop_reason = stop_reason if isinstance(stop_reason, str) else ""
    message = data.get("systemMessage")
    answer.system_message = message if isinstance(message, str) else None
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, dict):
        answer.specific = specific
        named = specific.get("hookEventName")
        if named is not None and named != event:
            answer.problems.append(f"hookSpecificOutput.hookEventName {named!r} for {event}")
        context = specific.get("additionalContext")
        answer.context = context if isinstance(context, str) else None
        changed = specific.get("tool_input")
        answer.tool_input = changed if isinstance(changed, dict) else None


def blocked_text(answer: Answer) -> str:
    """Everything a blocked answer tells: its reason, stop reason and system message."""
    return " ".join(x for x in (answer.reason, answer.stop_reason,
                                answer.system_message or "") if x)


def claude_blocked(done: subprocess.CompletedProcess[str]) -> tuple[bool, str]:
    """A Claude Code PreToolUse answer's (blocked, reason) (code.claude.com/docs/en/hooks:
    exit 2 blocks with stderr; exit 0 JSON hookSpecificOutput.permissionDecision "deny" or
    the older decision "block")."""
    if done.returncode == 2:
        return True, done.stderr
    if done.returncode != 0 or not done.stdout.strip():
        return False, ""
    data = json.loads(done.stdout)
    specific = data.get("hookSpecificOutput") or {}
    if specific.get("permissionDecision") == "deny":
        return True, str(specific.get("permissionDecisionReason", ""))
    if data.get("decision") == "block":
        return True, str(data.get("reason", ""))
    return False, ""


