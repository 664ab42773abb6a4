"""The fields of a Claude Code hook's answer that initd does not act on itself but hands
back to Claude Code as the hook gave them (verdict.Verdict's ``relayed``, the Outcome's
``relayed``, wires/claude.py puts them in its answer): each event's own
``hookSpecificOutput`` fields of https://code.claude.com/docs/en/hooks (the revision of
2026-08-22, Claude Code v2.1.240), and the universal ``terminalSequence``.

Each is taken only when its value has the type the reference (and the Agent SDK's
``SyncHookJSONOutput``) gives it: one hook's ill-typed field would make Claude Code reject
the whole merged answer, a deny of another hook with it (a field is dropped, with a
note, instead). When several hooks give one, the last in load order wins.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

ACTIONS = ("accept", "decline", "cancel")  # Elicitation's and ElicitationResult's
TERMINAL = "terminalSequence"  # a top-level field, on every event
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def _text(value: object) -> bool:
    return isinstance(value, str)


def _flag(value: object) -> bool:
    return isinstance(value, bool)


def _paths(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _object(value: object) -> bool:
    return isinstance(value, dict)


def _action(value: object) -> bool:
    return value in ACTIONS


def _any(value: object) -> bool:
    return value is not None


def _updates(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


Check = Callable[[object], bool]
# initd's event -> the hookSpecificOutput fields it relays, each with its type's check
FIELDS: dict[str, dict[str, Check]] = {
    "session_start": {"initialUserMessage": _text, "sessionTitle": _text,
                      "watchPaths": _paths, "reloadSkills": _flag},
    "user_prompt_submit": {"sessionTitle": _text, "suppressOriginalPrompt": _flag},
    "user_prompt_expansion": {"suppressOriginalPrompt": _flag},
    "post_tool": {"updatedMCPToolOutput": _any, "classifierContext": _text},
    "permission_denied": {"retry": _flag},
    "cwd_changed": {"watchPaths": _paths},
    "file_changed": {"watchPaths": _paths},
    "elicitation": {"action": _action, "content": _object},
    "elicitation_result": {"action": _action, "content": _object},
    "message_display": {"displayContent": _text},
    "worktree_create": {"worktreePath": _text},  # an http hook's answer
}
# PermissionRequest's decision object: what initd relays besides behavior, message and
# updatedInput (which the Outcome carries): "For "allow" only" / "For "deny" only"
DECISION = {"allow": {"updatedPermissions": _updates}, "deny": {"interrupt": _flag}}


def relayed(event: str, data: Mapping[str, Any], specific: Mapping[str, Any]
            ) -> tuple[dict[str, Any] | None, str | None]:
    """(the fields of the answer ``data`` (its ``hookSpecificOutput`` is ``specific``) to
    hand back, or None; a note naming the fields dropped for their type, or None)."""
    out: dict[str, Any] = {}
    dropped: list[str] = []
    for name, check in FIELDS.get(event, {}).items():
        if name in specific:
            _take(out, dropped, name, specific[name], check)
    if event == "permission_request" and isinstance(specific.get("decision"), dict):
        decision = specific["decision"]
        extra = DECISION.get(str(decision.get("behavior")), {})
        kept = {k: decision[k] for k, check in extra.items() if k in decision
                and check(decision[k])}
        dropped += [f"decision.{k}" for k in extra if k in decision and k not in kept]
        if kept:
            out["decision"] = {"behavior": decision["behavior"], **kept}
    if TERMINAL in data:
        _take(out, dropped, TERMINAL, data[TERMINAL], _text)
    note = (f"{', '.join(dropped)}: not of the type Claude Code reads: not passed on"
            if dropped else None)
    return out or None, note


def _take(out: dict[str, Any], dropped: list[str], name: str, value: object,
          check: Check) -> None:
    if check(value):
        out[name] = value
    else:
        dropped.append(name)


def worktree_path(stdout: str) -> str | None:
    """A command hook's WorktreeCreate answer: "the path as the last non-empty line of
    stdout. Claude Code strips ANSI escape codes before reading that line"."""
    lines = [ANSI.sub("", line).strip() for line in stdout.splitlines()]
    found = [line for line in lines if line]
    return found[-1] if found else None
