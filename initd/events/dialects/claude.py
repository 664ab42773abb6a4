"""Claude Code's hooks: the ``hooks`` of its settings files (https://code.claude.com/docs/en/
hooks), in this order: the managed policy ``/etc/claude-code/managed-settings.json`` (the
image's), the user's ``~/.claude/settings.json``, the workspace's ``.claude/settings.json``
and ``.claude/settings.local.json`` (trust may be required for these two).

``{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
"...", "timeout": 30}]}]}}``: an event, its matcher groups (matchers.py), their handlers.
Only ``type: command`` runs (``prompt``, ``agent`` and ``http`` are Claude Code's own); a
command runs as written by ``sh -c`` (``"shell": "bash"``: ``bash -c``), ``timeout``
seconds (60 by default), ``async: true`` in the background, ``if`` a permission rule.
``disableAllHooks: true`` in the managed file turns every one off; in the user's file,
every one but the managed file's; in a workspace file, the workspace's (a repository
cannot turn off its user's hooks). The managed ``allowManagedHooksOnly: true`` leaves
only the managed file's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from initd.errors import shown
from initd.events import matchers
from initd.events.dialects.common import Collected, Fields, LoadError
from initd.events.model import Command, EventHook

MANAGED = "/etc/claude-code/managed-settings.json"
DEFAULT_TIMEOUT = 60.0  # seconds: the hooks reference's "60-second execution limit"
TIMEOUT_LIMIT = 86_400.0  # a day; more is a typo (milliseconds?), refused
# Claude Code's events, as its settings name them, and initd's (hooks/kinds.py)
EVENTS = {"PreToolUse": "pre_tool", "PostToolUse": "post_tool",
          "PostToolUseFailure": "post_tool_failure", "UserPromptSubmit": "user_prompt_submit",
          "Stop": "stop", "SubagentStop": "subagent_stop", "SessionStart": "session_start",
          "SessionEnd": "session_end", "PreCompact": "pre_compact",
          "Notification": "notification", "TeammateIdle": "teammate_idle",
          "TaskCompleted": "task_completed"}
NAMES = {event: name for name, event in EVENTS.items()}
TYPES = ("command", "prompt", "agent", "http")


def files(workspace: str, home: str, managed: str = MANAGED) -> list[tuple[str, str]]:
    """(path, scope) in the order they load: managed, user, project, local."""
    return [(managed, "managed"), (os.path.join(home, ".claude", "settings.json"), "user"),
            (os.path.join(workspace, ".claude", "settings.json"), "project"),
            (os.path.join(workspace, ".claude", "settings.local.json"), "local")]


def load(workspace: str, home: str, managed: str = MANAGED) -> Collected:
    found = Collected("claude")
    settings: list[tuple[str, str, dict[str, Any]]] = []
    for path, scope in files(workspace, home, managed):
        data = found.read(path, "json")
        if data is None:
            continue
        if not isinstance(data, dict):
            found.error(path, LoadError(f"{path}: expected a JSON object (Claude Code's "
                                        f"settings), got {shown(data, 40)}"))
            continue
        settings.append((path, scope, data))
    for path, scope, data in _enabled(found, settings):
        hooks = data.get("hooks")
        if hooks is None:
            continue
        if not isinstance(hooks, Mapping):
            found.error(path, LoadError(f"{path}: hooks: expected a mapping of event name: "
                                        f"[matcher groups], got {shown(hooks, 40)}"))
            continue
        for name, groups in hooks.items():
            _event(found, path, scope in ("project", "local"), workspace, home, name,
                   groups)
    return found


def _enabled(found: Collected, settings: list[tuple[str, str, dict[str, Any]]]
             ) -> list[tuple[str, str, dict[str, Any]]]:
    """The files whose hooks run, after ``disableAllHooks`` and ``allowManagedHooksOnly``."""
    def says(scope: str, key: str) -> str | None:
        return next((path for path, s, data in settings if s == scope
                     and data.get(key) is True), None)
    off: set[str] = set()
    if says("managed", "disableAllHooks"):
        off = {"managed", "user", "project", "local"}
    elif says("managed", "allowManagedHooksOnly") or says("user", "disableAllHooks"):
        off = {"user", "project", "local"}
    elif says("project", "disableAllHooks") or says("local", "disableAllHooks"):
        off = {"project", "local"}
    for path, scope, data in settings:
        if scope in off and data.get("hooks"):
            found.problems.append((path, f"{path}: hooks: not run (disableAllHooks or "
                                   "allowManagedHooksOnly)", "warning"))
    return [entry for entry in settings if entry[1] not in off]


def _event(found: Collected, path: str, in_workspace: bool, workspace: str, home: str,
           name: object, groups: object) -> None:
    key = f"hooks.{name}"
    event = EVENTS.get(name) if isinstance(name, str) else None
    if event is None:  # (an event initd never fires, PermissionRequest: no stand-in)
        found.error(path, LoadError(f"{path}: {key}: unknown Claude Code hook event "
                                    f"{shown(name, 40)} (initd serves: "
                                    f"{', '.join(EVENTS)})"), event=None)
        return
    # a group or hook initd cannot load (a matcher RE2 cannot run, a "prompt" hook, a
    # shell initd does not offer) stands in on its event: an error, which blocks a
    # blockable one (invariant 12), never a guard that is simply not there
    if not isinstance(groups, list):
        found.error(path, LoadError(f"{path}: {key}: expected a list of matcher groups "
                                    '([{"matcher": ..., "hooks": [...]}])'), event)
        return
    for index, group in enumerate(groups):
        gkey = f"{key}[{index}]"
        try:
            text, handlers, warnings = _group(event, group, path, gkey)
        except LoadError as err:
            found.error(path, err, event)
            continue
        for warning in warnings:
            found.problems.append((path, f"{path}: {warning}", "warning"))
        for at, handler in enumerate(handlers):
            found.hook(path, _hook, event, handler, path, f"{gkey}.hooks[{at}]", text,
                       in_workspace, workspace, home, event=event)


def _group(event: str, group: object, path: str, key: str
           ) -> tuple[str, list[Any], tuple[str, ...]]:
    f = Fields(group, path, key)
    text = f.text("matcher", "")
    handlers = f.get("hooks")
    if not isinstance(handlers, list):
        raise f.error("hooks", "expected a list of hooks ([{\"type\": \"command\", "
                      "\"command\": ...}])")
    if text not in ("", "*") and event not in matchers.FIELDS:
        f.used.add("matcher")
        return text, handlers, (*f.unknown(), f"{key}.matcher: {NAMES[event]} has no "
                                "matcher: ignored (every occurrence runs these hooks)")
    try:
        matchers.matcher(event, text, None, "", "")
    except matchers.MatcherError as err:
        raise f.error("matcher", f"{shown(text, 60)}: {err}") from None
    return text, handlers, f.unknown()


def _hook(event: str, entry: object, path: str, key: str, text: str, in_workspace: bool,
          workspace: str, home: str) -> EventHook:
    f = Fields(entry, path, key)
    kind = f.get("type")
    if kind is None:
        raise f.error("type", 'required ("command")')
    if kind != "command":
        what = f"Claude Code's {kind!r} hooks need its model or its HTTP client" \
            if kind in TYPES else f"got {shown(kind, 40)}"
        raise f.error("type", f'initd runs "command" hooks only ({what})')
    command = f.text("command", required=True)
    timeout = f.number("timeout", DEFAULT_TIMEOUT)
    if timeout > TIMEOUT_LIMIT:
        raise f.error("timeout", f"{timeout:g} seconds: at most {TIMEOUT_LIMIT:g} (a day); "
                      "Claude Code's timeout is in seconds, not milliseconds")
    shell = f.choice("shell", ("bash", "sh"), "sh")
    rule = f.text("if")
    if rule is not None:
        try:
            matchers.check_rule(rule)
        except matchers.MatcherError as err:
            raise f.error("if", f"{shown(rule, 60)}: {err}") from None
    rewake = f.flag("asyncRewake", False)
    background = f.flag("async", False) or rewake
    f.get("statusMessage")  # Claude Code's spinner text: nothing to show here
    warnings = f.unknown()
    if rewake:
        warnings += (f"{key}.asyncRewake: initd cannot wake the agent: the hook runs in "
                     "the background, its exit code is only recorded",)
    if rule is not None and event not in ("pre_tool", "post_tool", "post_tool_failure"):
        warnings += (f"{key}.if: {NAMES[event]} is not a tool event: this hook never runs "
                     "(as in Claude Code)",)
    return EventHook(
        event=event, dialect="claude", source=path, key=key, label=command,
        spec=Command(command, shell), timeout=timeout, wait=not background,
        workspace=in_workspace, warnings=warnings,
        matcher=matchers.matcher(event, text, rule, workspace, home))
