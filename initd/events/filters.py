"""Which hooks an event's payload concerns: a loop's hooks only for its stage, a
``tool_name`` list (any case), nyzhi's ``pattern`` against the payload's files (a
command with ``{file}`` runs once per matching file), and Claude Code's matcher and
``if`` (claude/matchers.py), whose identical commands (and Gemini CLI's) run once per
event."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from initd.events.model import AgentCommand, Command, EventHook, Exec, HttpHook, Shell
from initd.events.wire import Origin
from initd.hooks import patterns


def applies(hook: EventHook, payload: dict[str, Any]) -> bool:
    if hook.stage is not None and payload.get("stage") not in (None, hook.stage):
        return False
    if hook.matcher is not None and not hook.matcher.matches(payload):
        return False
    if hook.tool_name:
        tool = payload.get("tool_name", payload.get("toolName", payload.get("tool")))
        if not isinstance(tool, str) or tool.lower() not in {t.lower() for t in hook.tool_name}:
            return False
    return not hook.pattern or bool(event_files(hook.pattern, payload_files(payload)))


def deduplicated(hooks: Iterable[EventHook], payload: dict[str, Any],
                 refused: Callable[[EventHook], bool] = lambda hook: False
                 ) -> list[EventHook]:
    """The hooks, less a Claude Code command that an earlier one of the event, matching too,
    runs already (Claude Code de-duplicates identical commands: a command in both the
    user's and the project's settings runs once). A ``refused`` hook (trust) is kept as
    it is, its filters never evaluated, and stands for no other."""
    seen: set[str] = set()
    kept = []
    for hook in hooks:
        if not refused(hook) and isinstance(hook.spec, Command | Exec | AgentCommand | HttpHook) \
                and applies(hook, payload):
            same = json.dumps([type(hook.spec).__name__, hook.spec], sort_keys=True)
            if same in seen:
                continue
            seen.add(same)
        kept.append(hook)
    return kept


def rewritten(payload: dict[str, Any], origin: Origin | None,
              updated: dict[str, Any] | None) -> tuple[dict[str, Any], Origin | None]:
    """The event as a hook of a format whose hooks run one after another reads it: with
    the tool's input the hooks before it rewrote (``updated``) merged over it, as Gemini
    CLI gives a sequential hook its predecessor's ``tool_input``, in initd's shape and in
    the agent's own (``origin``)."""
    if not updated:
        return payload, origin

    def over(data: dict[str, Any]) -> dict[str, Any]:
        given = data.get("tool_input")
        return {**data, "tool_input": {**given, **updated}} if isinstance(given, dict) \
            else data
    return over(payload), None if origin is None else origin._replace(
        payload=over(origin.payload))


def files_for(hook: EventHook, payload: dict[str, Any]) -> list[str | None]:
    """A command with {file} runs once per (matching) file; anything else once."""
    if not isinstance(hook.spec, Shell) or "{file}" not in hook.spec.command:
        return [None]
    files = payload_files(payload)
    if hook.pattern:
        files = event_files(hook.pattern, files)
    return list(files) or [None]


def payload_files(payload: dict[str, Any]) -> list[str]:
    files = payload.get("files")
    found = [f for f in files if isinstance(f, str)] if isinstance(files, list) else []
    for key in ("file", "path"):
        if isinstance(payload.get(key), str) and payload[key] not in found:
            found.insert(0, payload[key])
    return found


def event_files(pattern: tuple[str, ...], files: list[str]) -> list[str]:
    """nyzhi's patterns: ``*.ext`` by suffix, a path substring, or (any other glob) a glob
    over the workspace-relative path, as file hooks match (hooks/patterns.py)."""
    def one(item: str, path: str) -> bool:
        if item.startswith("*.") and not any(c in item[1:] for c in "*?[{"):
            return path.endswith(item[1:])
        if any(c in item for c in "*?[{"):
            return patterns.matches(item, path)
        return item in path
    return [f for f in files if any(one(item, f) for item in pattern)]
