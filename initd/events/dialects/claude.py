"""Claude Code's hooks: the ``hooks`` of its settings files (https://code.claude.com/docs/en/
hooks), in this order: the managed policy ``/etc/claude-code/managed-settings.json`` (the
image's), the user's ``~/.claude/settings.json``, the workspace's ``.claude/settings.json``
and ``.claude/settings.local.json`` (trust may be required for these two).

``{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
"...", "timeout": 30}]}]}}``: an event, its matcher groups (claude/matchers.py), their handlers.
``type: command`` runs as written by bash (the reference's default ``shell``; ``sh`` where
the image has no bash, said once), or, with ``args``, as an argument vector without a
shell; ``type: http`` POSTs the event to its ``url`` (actions/claudehttp.py); ``prompt``
and ``agent`` need Claude Code's model: each is refused at load, and stands in on its
event as an error (a gate that will not gate is never silently skipped). ``timeout``
seconds: 600 by default, 30 on UserPromptSubmit, 10 on MessageDisplay, and SessionEnd's
hooks share a budget of 1.5 s raised to their longest ``timeout`` (at most 60), as the
reference gives them; ``async: true`` in the background (``asyncRewake`` too: initd has no
model to wake, said at load), ``if`` a permission rule (tool events only), ``shell``
bash or sh (``powershell`` is a load error: never run with another shell);
``statusMessage`` (a spinner's text) and ``once`` ("ignored in settings files") are
accepted and change nothing.

``disableAllHooks`` is read after settings precedence (managed > local > project > user):
``true`` in the managed file turns every hook off, and its ``false`` keeps every one on;
else the value left turns off the workspace's hooks, and the user's own file alone
turns off the user's (a repository can neither turn its user's hooks off nor back on:
initd's choice). The managed ``allowManagedHooksOnly: true`` leaves only the managed file's,
unless those are all initd's own line (``initd shim claude``): Claude Code then runs
initd alone, and initd every other hook."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from typing import Any

from initd.config.problems import WARNING, LoadError, Problem
from initd.errors import shown
from initd.events import sources
from initd.events.actions import ActionResult, Call
from initd.events.claude import answers, handlers, matchers
from initd.events.claude import input as claude_input
from initd.events.claude.names import EVENTS, NAMES
from initd.events.dialect import Where, own_name
from initd.events.loading import MATCHER_GROUPS, Collected, EventFields
from initd.events.model import Command, EventHook, HttpHook
from initd.events.verdict import Decision, Verdict
from initd.events.wire import Wire, is_shim
from initd.events.wires import claude as claude_wire
from initd.hooks.kinds import Event

NAME = "claude"

SCOPES = ("managed", "user", "project", "local")  # sources.py's, in this order
MANAGED = sources.paths(NAME, "", "")[0][0]  # /etc/claude-code/managed-settings.json
# seconds, the reference's "Common fields": "Defaults: 600 for `command`, `http`, and
# `mcp_tool`"; "`UserPromptSubmit` hooks have a default timeout of 30 seconds"; "`SessionEnd`
# hooks share a 1.5-second budget; if your settings set a longer per-hook `timeout`,
# Claude Code raises the budget to match, up to 60 seconds"; MessageDisplay "lowers it to 10"
DEFAULT_TIMEOUT = 600.0
EVENT_TIMEOUTS = {"user_prompt_submit": 30.0, "session_end": 1.5, "message_display": 10.0}
SESSION_END_LIMIT = 60.0
TIMEOUT_LIMIT = 86_400.0  # a day; more is a typo (milliseconds?), refused
MODEL_TYPES = ("prompt", "agent")  # need Claude Code's model: refused, an error on the event
# "Only evaluated on tool events: PreToolUse, PostToolUse, PostToolUseFailure,
# PermissionRequest, and PermissionDenied. On other events, a hook with if set never runs"
TOOL_EVENTS = ("pre_tool", "post_tool", "post_tool_failure", "permission_request",
               "permission_denied")
NO_BASH = ("no bash in this image: Claude Code command hooks without \"shell\" run with sh "
           "(bash syntax such as [[ ]] fails there)")


def files(workspace: str, home: str, managed: str = MANAGED) -> list[tuple[str, str]]:
    """(path, scope) in the order they load: managed, user, project, local."""
    found = [(path, scope) for (path, _), scope in
             zip(sources.paths(NAME, workspace, home), SCOPES, strict=True)]
    return [(managed, "managed"), *found[1:]]


def load(workspace: str, home: str, managed: str = MANAGED) -> Collected:
    found = Collected(NAME)
    settings: list[tuple[str, str, dict[str, Any]]] = []
    for path, scope in files(workspace, home, managed):
        data = found.read(path, "json")
        if data is None:
            continue
        if not isinstance(data, dict):
            found.error(path, LoadError("expected a JSON object (Claude Code's settings), "
                                        f"got {shown(data, 40)}", path))
            continue
        settings.append((path, scope, data))
    shell = "bash" if shutil.which("bash") else "sh"
    for path, scope, data in _enabled(found, settings):
        hooks = data.get("hooks")
        if hooks is None:
            continue
        if not isinstance(hooks, Mapping):
            found.error(path, LoadError("expected a mapping of event name: [matcher groups], "
                                        f"got {shown(hooks, 40)}", path, "hooks"))
            continue
        for name, groups in hooks.items():
            _event(found, path, scope in ("project", "local"), workspace, home, name,
                   groups, shell)
    if shell == "sh" and any(isinstance(h.spec, Command) for h in found.hooks):
        found.problems.append(Problem("", None, NO_BASH, WARNING))  # said once, at load
    ends = [h.timeout for h in found.hooks if h.event == "session_end"]
    if ends:  # one budget for all of SessionEnd's hooks (they run together)
        budget = min(SESSION_END_LIMIT, max(ends))
        found.hooks = [h._replace(timeout=budget) if h.event == "session_end" else h
                       for h in found.hooks]
    return found


def _enabled(found: Collected, settings: list[tuple[str, str, dict[str, Any]]]
             ) -> list[tuple[str, str, dict[str, Any]]]:
    """The files whose hooks run, after ``disableAllHooks`` and ``allowManagedHooksOnly``.
    ``disableAllHooks`` is the value left after settings precedence (managed > local >
    project > user: https://code.claude.com/docs/en/settings, "Settings precedence"; the
    hooks reference: "Claude Code reads the value left after settings precedence
    applies"); only the managed file's turns off the managed hooks. initd's choice
    (docs/claude-code.md, "Turning hooks off"): the workspace's files, which the agent
    writes, decide nothing about the user's hooks; the user's own file alone does."""
    def value(scope: str, key: str = "disableAllHooks") -> bool | None:
        return next((data[key] for _, s, data in settings
                     if s == scope and isinstance(data.get(key), bool)), None)
    managed = value("managed")
    off: set[str] = set()
    if managed:
        off = {"managed", "user", "project", "local"}
    elif value("managed", "allowManagedHooksOnly") and not _shim_only(settings):
        off = {"user", "project", "local"}
    elif managed is None:  # (a managed false is the value left: every hook runs)
        left = next((v for v in map(value, ("local", "project", "user")) if v is not None),
                    None)
        off = ({"project", "local"} if left else set()) | (
            {"user"} if value("user") else set())
    for path, scope, data in settings:
        if scope in off and data.get("hooks"):
            found.problems.append(Problem(path, "hooks", "not run (disableAllHooks or "
                                          "allowManagedHooksOnly)", WARNING))
    return [entry for entry in settings if entry[1] not in off]


def _shim_only(settings: list[tuple[str, str, dict[str, Any]]]) -> bool:
    """The managed file's hooks are all initd's own line: its allowManagedHooksOnly is
    for Claude Code (run initd alone), not for initd."""
    hooks = next((data.get("hooks") for _, scope, data in settings if scope == "managed"),
                 None)
    lines = [handler.get("command") for groups in (hooks or {}).values()
             if isinstance(groups, list) for group in groups if isinstance(group, Mapping)
             for handler in group.get("hooks") or [] if isinstance(handler, Mapping)]
    return bool(lines) and all(isinstance(line, str) and is_shim(line) for line in lines)


def _event(found: Collected, path: str, in_workspace: bool, workspace: str, home: str,
           name: object, groups: object, shell: str) -> None:
    # a group or hook initd cannot load (a matcher RE2 cannot run, a "prompt" hook, a
    # shell initd does not offer) stands in on its event: an error, which blocks a
    # blockable one (invariant 12), never a guard that is simply not there
    for event, gkey, group in found.agent_entries(path, name, groups, EVENTS, "Claude Code",
                                                  MATCHER_GROUPS):
        try:
            text, handlers, warnings = _group(event, group, path, gkey)
        except LoadError as err:
            found.error(path, err, event)
            continue
        for warning in warnings:
            found.problems.append(Problem(path, None, warning, WARNING))
        for at, handler in enumerate(handlers):
            found.hook(path, _hook, event, handler, path, f"{gkey}.hooks[{at}]", text,
                       in_workspace, workspace, home, shell, event=event)


def _group(event: str, group: object, path: str, key: str
           ) -> tuple[str, list[Any], tuple[str, ...]]:
    f = EventFields(group, path, key)
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
          workspace: str, home: str, shell: str = "bash") -> EventHook:
    f = EventFields(entry, path, key)
    kind = f.get("type")
    if kind is None:
        raise f.error("type", 'required ("command" or "http")')
    if kind in MODEL_TYPES:
        raise f.error("type", f"a {kind!r} hook asks Claude Code's model, which initd does not "
                      f"have: this gate will not gate. It stands in on {NAMES[event]} as "
                      "an error (which blocks a blockable event) until it is a \"command\" "
                      "or \"http\" hook")
    if kind not in ("command", "http"):
        raise f.error("type", f'expected "command" or "http", got {shown(kind, 40)}')
    timeout = f.number("timeout", EVENT_TIMEOUTS.get(event, DEFAULT_TIMEOUT))
    if timeout > TIMEOUT_LIMIT:
        raise f.error("timeout", f"{timeout:g} seconds: at most {TIMEOUT_LIMIT:g} (a day); "
                      "Claude Code's timeout is in seconds, not milliseconds")
    spec = handlers.http(f) if kind == "http" else handlers.command(f, workspace, shell)
    rule = f.text("if")
    if rule is not None:
        try:
            matchers.check_rule(rule)
        except matchers.MatcherError as err:
            raise f.error("if", f"{shown(rule, 60)}: {err}") from None
    rewake = f.flag("asyncRewake", False)
    background = f.flag("async", False) or rewake
    f.text("statusMessage")  # Claude Code's spinner text: initd shows none
    f.flag("once", False)  # "ignored in settings files" (honoured in skill frontmatter)
    warnings = f.unknown()
    if rewake:
        warnings += (f"{key}.asyncRewake: initd cannot wake the agent: the hook runs in "
                     "the background, its exit code is only recorded",)
    if rule is not None and event not in TOOL_EVENTS:
        warnings += (f"{key}.if: {NAMES[event]} is not a tool event: this hook never runs "
                     "(as in Claude Code)",)
    return EventHook(
        event=event, dialect=NAME, source=path, key=key,
        label=spec.url if isinstance(spec, HttpHook) else spec.command,
        spec=spec, timeout=timeout, wait=not background,
        workspace=in_workspace, warnings=warnings,
        matcher=matchers.matcher(event, text, rule, workspace, home))


class Claude:
    """Claude Code's own rules: its matched hooks run together and read the event on stdin
    alone; its answers mean what its reference says (claude/answers.py)."""

    name = NAME
    title = "Claude Code"
    together = True
    stdin_only = True
    wire: Wire | None = claude_wire.WIRE

    def load(self, where: Where) -> Collected:
        return load(where.workspace, where.home)

    def files(self, where: Where) -> list[str]:
        return [path for path, _ in files(where.workspace, where.home)]

    def stdin(self, call: Call) -> dict[str, Any]:
        return claude_input.stdin(call, own_name(call))

    def verdict(self, result: ActionResult, hook: EventHook, event: Event) -> Verdict:
        said = answers.answer(result, hook.label, event, hook.on_error == "deny")
        return Verdict(said.blocks, False, None if said.decision is None
                       else Decision(said.decision), *said[2:12],
                       updated_output=said.updated_output, specific=said.relayed)


DIALECT = Claude()
