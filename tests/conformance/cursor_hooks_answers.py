"""A hook's answer read the way Cursor reads it, and the published contracts it is held to.

HOOKS "Command-Based Hooks" (revision of 2026-08-24):

    Exit code `0` - Hook succeeded, use the JSON output
    Exit code `2` - Block the action (equivalent to returning `permission: "deny"`)
    Other exit codes - Hook failed, action proceeds (fail-open by default)

and "By default, hook failures (crash, timeout, invalid JSON) allow the action through
(fail-open)". So ``initd emit --from cursor`` blocks only by exit 2 or by a JSON answer
that denies: an exit 1, or an exit 0 whose stdout is not JSON, lets the action through.
THIRD "Response Format Compatibility": Cursor also reads Claude Code's nested
``hookSpecificOutput`` (permissionDecision -> permission, permissionDecisionReason ->
user_message, updatedInput -> updated_input) and ``decision: "block"`` + ``reason`` from
stop/subagentStop as a follow-up; those spellings are read as the same meaning.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

CONTRACTS = Path(__file__).resolve().parent / "contracts" / "cursor"
CONTRACT = CONTRACTS / "py-cursor-hooks-0.1.1.hooks.schema.json"


@dataclass
class Answer:
    """What Cursor makes of a hook's exit code and stdout."""

    event: str
    code: int
    stdout: str
    stderr: str
    data: dict[str, Any] = field(default_factory=dict)
    failed: bool = False  # a hook failure: fail-open (or blocked under failClosed)
    problems: list[str] = field(default_factory=list)  # not valid by Cursor's rules

    @property
    def blocked(self) -> bool:
        """The action does not go ahead: exit 2, a deny, ``continue: false`` from
        beforeSubmitPrompt, or ``ask`` from subagentStart ("treated as deny")."""
        if self.code == 2:
            return True
        if self.failed:
            return False
        if self.event == "beforeSubmitPrompt" and self.data.get("continue") is False:
            return True
        if self.event == "subagentStart" and self.permission == "ask":
            return True
        return self.permission == "deny"

    @property
    def permission(self) -> str | None:
        """allow / deny / ask, or None (no decision: the action proceeds)."""
        if self.code == 2:
            return "deny"
        if self.failed:
            return None
        value = self.data.get("permission")
        nested = self.data.get("hookSpecificOutput")
        if value is None and isinstance(nested, dict):
            value = nested.get("permissionDecision")
        return value if isinstance(value, str) else None

    def get(self, name: str) -> Any:
        """An answer field by Cursor's name, or its Claude Code spelling (THIRD)."""
        if self.failed:
            return None
        nested = self.data.get("hookSpecificOutput")
        nested = nested if isinstance(nested, dict) else {}
        claude = {"user_message": "permissionDecisionReason", "updated_input": "updatedInput",
                  "additional_context": "additionalContext"}.get(name)
        if name in self.data:
            return self.data[name]
        if claude is not None and claude in nested:
            return nested[claude]
        if name == "followup_message" and self.event in ("stop", "subagentStop"):
            for where in (self.data, nested):
                if where.get("decision") == "block" and where.get("reason"):
                    return where["reason"]
        return None

    @property
    def followup(self) -> str | None:
        """stop / subagentStop: the message Cursor submits next ("When provided and
        non-empty, Cursor will automatically submit it as the next user message")."""
        value = self.get("followup_message")
        return value if isinstance(value, str) and value else None

    def says(self, text: str) -> bool:
        """``text`` reaches the user or the agent: user_message, agent_message, or, on
        exit 2 (no JSON to read), stderr."""
        parts = [self.get("user_message"), self.get("agent_message")]
        if self.code == 2:
            parts += [self.stderr, self.stdout]
        return any(isinstance(p, str) and text in p for p in parts)

    def describe(self) -> str:
        return (f"exit {self.code}; stdout {self.stdout[:1500]!r}; "
                f"stderr {self.stderr[-1500:]!r}; problems {self.problems}")


def read_answer(event: str, proc: subprocess.CompletedProcess[str]) -> Answer:
    """Cursor's reading of a command hook's result for ``event``."""
    a = Answer(event, proc.returncode, proc.stdout, proc.stderr)
    text = proc.stdout.strip()
    if proc.returncode not in (0, 2):
        a.failed = True
        return a
    if not text:
        return a
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        if proc.returncode == 0:  # "invalid JSON" is a hook failure
            a.failed = True
            a.problems.append("stdout on exit 0 is not one JSON object")
        return a
    a.data = obj
    a.problems += output_errors(event, obj)
    return a


# -- py-cursor-hooks 0.1.1 (contracts/cursor) -------------------------------------------


@cache
def _contract() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CONTRACT.read_text())
    return data


def contract_events() -> list[str]:
    return sorted(_contract()["events"])


def _errors(instance: object, ref: str) -> list[str]:
    schema = {**_contract(), "$ref": ref}
    schema.pop("events", None)
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
            for e in validator.iter_errors(instance)]


def input_errors(event: str, obj: object) -> list[str]:
    """``obj`` against the package's input model of ``event`` (none: no errors)."""
    refs = _contract()["events"].get(event)
    return _errors(obj, refs["input"]) if refs else []


def output_errors(event: str, obj: object) -> list[str]:
    """``obj`` against the package's output model of ``event`` (none: no errors)."""
    refs = _contract()["events"].get(event)
    return _errors(obj, refs["output"]) if refs else []


# -- hooks.json, as HOOKS "Configuration" describes it ------------------------------------

OPTION_TYPES: dict[str, tuple[type, ...]] = {
    "command": (str,), "type": (str,), "timeout": (int, float), "loop_limit": (int, type(None)),
    "failClosed": (bool,), "matcher": (str, dict), "prompt": (str,), "model": (str,)}


def config_errors(config: object, events: list[str]) -> list[str]:
    """What is wrong with a hooks.json by HOOKS' own tables: "Global Configuration
    Options" (version: number, 1) and "Per-Script Configuration Options" (command
    required; type "command"|"prompt"; timeout number; loop_limit number|null; failClosed
    boolean; matcher), with event names among ``events``."""
    if not isinstance(config, dict):
        return ["(top): not an object"]
    errors = [] if config.get("version") == 1 else [f"version: {config.get('version')!r}"]
    table = config.get("hooks")
    if not isinstance(table, dict):
        return [*errors, "hooks: not an object"]
    for name, definitions in table.items():
        if name not in events:
            errors.append(f"hooks/{name}: not an event of the reference")
        if not isinstance(definitions, list):
            errors.append(f"hooks/{name}: not an array")
            continue
        for i, d in enumerate(definitions):
            where = f"hooks/{name}/{i}"
            if not isinstance(d, dict) or not isinstance(d.get("command"), str) \
                    or not d["command"].strip():
                errors.append(f"{where}: no command")
                continue
            for key, value in d.items():
                want = OPTION_TYPES.get(key)
                if want is None:
                    errors.append(f"{where}/{key}: not an option of the reference")
                elif not isinstance(value, want) or (key != "failClosed"
                                                     and isinstance(value, bool)):
                    errors.append(f"{where}/{key}: {value!r} is not of its type")
            if d.get("type", "command") not in ("command", "prompt"):
                errors.append(f"{where}/type: {d['type']!r}")
    return errors
