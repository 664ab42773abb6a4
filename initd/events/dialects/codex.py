"""OpenAI Codex's hooks (https://developers.openai.com/codex/hooks, as published
2026-05-18; @openai/codex@0.171.0): "Codex discovers hooks next to active config layers in
either of these forms: ``hooks.json``; inline ``[hooks]`` tables inside ``config.toml``".
In the order they load: the managed ``/etc/codex/requirements.toml``'s ``[hooks]``, then
each layer's ``hooks.json`` and ``config.toml``: the managed ``/etc/codex``, the user's
``~/.codex`` ($CODEX_HOME), the workspace's ``.codex`` (trust may be required there).

``{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
"...", "timeout": 30}]}]}}`` (or ``[[hooks.PreToolUse]]`` with ``[[hooks.PreToolUse.hooks]]``
in TOML): an event, its matcher groups, their handlers. "Matching hooks from multiple files
all run", "launched concurrently"; a command runs in the session's cwd, with bash (sh
where there is none), ``timeout`` seconds (600 by default, at least 1). ``prompt`` and
``agent`` handlers, and ``async`` ones, Codex parses and skips: so does initd, said once.

``[features] hooks = false`` (or ``codex_hooks``) of a layer's config.toml turns that
layer's hooks off, and the layers it is the value left for (the user's, the workspace's:
a workspace cannot turn its user's hooks back on, initd's choice as for Claude Code);
only requirements.toml's turns every hook off, and its ``allow_managed_hooks_only = true``
leaves the managed hooks alone (openai/codex docs/config.md), unless those are all initd's
own line: Codex then runs initd alone, and initd every other hook. A file initd cannot read
or parse, a group or handler it cannot load, stands in as an error on its event (Codex
runs on without it: initd blocks a guard's event, invariant 12).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import Any

from initd.config.problems import WARNING, LoadError, Problem
from initd.errors import shown
from initd.events import sources
from initd.events.actions import ActionResult, Call
from initd.events.claude.matchers import MatcherError
from initd.events.codex import answers, shape
from initd.events.codex.matchers import CodexMatcher, matcher
from initd.events.codex.names import EVENTS, MATCHED, NAMES
from initd.events.dialect import Where
from initd.events.loading import MATCHER_GROUPS, Collected, EventFields
from initd.events.model import EventHook, Exec
from initd.events.verdict import Verdict
from initd.events.wire import Wire, is_shim
from initd.events.wires import codex as codex_wire
from initd.hooks.kinds import Event

NAME = "codex"
# sources.py's rows, in this order: (scope, form)
KINDS = (("requirements", "toml"), ("managed", "json"), ("managed", "toml"), ("user", "json"),
         ("user", "toml"), ("project", "json"), ("project", "toml"))
SCOPES = ("requirements", "managed", "user", "project")
DEFAULT_TIMEOUT = 600.0  # openai/codex discovery.rs: timeout_sec.unwrap_or(600).max(1)
TIMEOUT_LIMIT = 86_400.0  # a day; more is a typo (milliseconds?), refused
NOT_EVENTS = {"json": (), "toml": ("state",),  # [hooks.state]: Codex's reviews
              "requirements": ("managed_dir", "windows_managed_dir")}
# The command as Codex runs it, in the session's cwd: the hook's input names it first
# (the dialect's stdin), read here without a JSON parser; one with a quote or a backslash
# in it (JSON's escapes) leaves the hook in the workspace. $0 is the command, $1 the shell.
RUN = ('input=$(cat); rest=${input#"{\\"cwd\\": \\""}; if [ "$rest" != "$input" ]; then '
       'cwd=${rest%%\\"*}; case $cwd in *\\\\*) ;; *) cd -- "$cwd" 2>/dev/null;; esac; fi; '
       'printf %s "$input" | "$1" -c "$0"')


def files(workspace: str, home: str) -> list[tuple[str, str, str]]:
    """(path, scope, form) in the order they load; the user's are in $CODEX_HOME when
    the service has one (an absolute path)."""
    moved = os.environ.get("CODEX_HOME", "")
    out = []
    for (path, _), (scope, form) in zip(sources.paths(NAME, workspace, home), KINDS,
                                        strict=True):
        if scope == "user" and os.path.isabs(moved):
            path = os.path.join(moved, os.path.basename(path))
        out.append((path, scope, "requirements" if scope == "requirements" else form))
    return out


def load(workspace: str, home: str) -> Collected:
    found = Collected(NAME)
    read: list[tuple[str, str, str, dict[str, Any]]] = []
    for path, scope, form in files(workspace, home):
        data = found.read(path, "json" if form == "json" else "toml")
        if data is None:
            continue
        if not isinstance(data, dict):
            found.error(path, LoadError(f"expected a JSON object, got {shown(data, 40)}",
                                        path))
            continue
        read.append((path, scope, form, data))
    off = _off(found, read)
    shell = "bash" if shutil.which("bash") else "sh"
    layers: dict[str, list[str]] = {}
    for path, scope, form, data in read:
        hooks = {name: groups for name, groups in (_hooks(found, path, form, data) or {}
                                                   ).items() if name not in NOT_EVENTS[form]}
        if not hooks:
            continue
        if scope in off:
            found.problems.append(Problem(path, "hooks", "not run ([features] hooks = "
                                          "false, or allow_managed_hooks_only)", WARNING))
            continue
        layers.setdefault(scope, []).append(path)
        for name, groups in hooks.items():
            _event(found, path, scope, name, groups, shell)
    for scope, paths in layers.items():
        if scope != "requirements" and len(paths) > 1:  # (Codex's warning, and both run)
            found.problems.append(Problem(paths[1], "hooks", f"hooks in both {paths[0]} and "
                                          "here: prefer one of the two", WARNING))
    return found


def _off(found: Collected, read: list[tuple[str, str, str, dict[str, Any]]]) -> set[str]:
    """The scopes whose hooks do not run: ``[features] hooks = false`` (the value left
    after precedence, project > user > managed, for the user's and the workspace's, each
    layer's own for itself); requirements.toml's turns all off, its
    ``allow_managed_hooks_only`` the user's and the workspace's."""
    flags: dict[str, bool | None] = dict.fromkeys(SCOPES)
    managed_only = False
    for path, scope, form, data in read:
        if form == "json":
            continue
        features = data.get("features")
        said = features.get("hooks", features.get("codex_hooks")) \
            if isinstance(features, Mapping) else None
        if isinstance(said, bool):
            flags[scope] = said
        elif said is not None:
            found.problems.append(Problem(path, "features.hooks", "expected true or false: "
                                          "ignored", WARNING))
        if scope == "requirements":
            managed_only = data.get("allow_managed_hooks_only") is True
    if flags["requirements"] is False:
        return set(SCOPES)
    off = {"user", "project"} if managed_only and not _shim_only(read) else set()
    order = ("project", "user", "managed")
    for at, scope in enumerate(order):
        left = next((flags[s] for s in order[at:] if flags[s] is not None), None)
        if left is False:
            off.add(scope)
    return off


def _shim_only(read: list[tuple[str, str, str, dict[str, Any]]]) -> bool:
    """The managed hooks are all initd's own line (``initd shim codex`` written to
    /etc/codex): allow_managed_hooks_only is for Codex (run initd alone), not for initd."""
    groups = [group for _, scope, form, data in read if scope in ("requirements", "managed")
              and isinstance(data.get("hooks"), Mapping)
              for name, listed in data["hooks"].items() if name not in NOT_EVENTS[form]
              and isinstance(listed, list) for group in listed]
    lines = [handler.get("command") for group in groups if isinstance(group, Mapping)
             for handler in group.get("hooks") or [] if isinstance(handler, Mapping)]
    return bool(lines) and all(isinstance(line, str) and is_shim(line) for line in lines)


def _hooks(found: Collected, path: str, form: str, data: dict[str, Any]
           ) -> Mapping[str, Any] | None:
    """The file's ``hooks`` mapping (hooks.json has no other key: openai/codex
    ``HooksFile`` is ``deny_unknown_fields``), or None (its error, if it is wrong)."""
    if form == "json":
        other = next((key for key in data if key != "hooks"), None)
        if other is not None or "hooks" not in data:
            why = (f"unknown key {shown(other, 40)} (Codex's hooks.json holds only "
                   '"hooks")' if other is not None else 'required: {"hooks": {...}}')
            found.error(path, LoadError(why, path, other or "hooks"))
            return None
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, Mapping):
        found.error(path, LoadError("expected a mapping of event name: [matcher groups], "
                                    f"got {shown(hooks, 40)}", path, "hooks"))
        return None
    return hooks


def _event(found: Collected, path: str, scope: str, name: object, groups: object,
           shell: str) -> None:
    for event, gkey, group in found.agent_entries(path, name, groups, EVENTS, "Codex",
                                                  MATCHER_GROUPS):
        try:
            matcher, handlers, warnings = _group(event, group, path, gkey)
        except LoadError as err:
            found.error(path, err, event)
            continue
        for warning in warnings:
            found.problems.append(Problem(path, None, warning, WARNING))
        for at, handler in enumerate(handlers):
            hkey = f"{gkey}.hooks[{at}]"
            skipped = _skipped(handler)
            if skipped is not None:
                found.problems.append(Problem(path, hkey, skipped, WARNING))
                continue
            found.hook(path, _hook, event, handler, path, hkey, matcher, scope, shell,
                       event=event)


def _group(event: str, group: object, path: str, key: str
           ) -> tuple[CodexMatcher | None, list[Any], tuple[str, ...]]:
    f = EventFields(group, path, key)
    handlers = f.get("hooks")
    if not isinstance(handlers, list):
        raise f.error("hooks", 'expected a list of hooks ([{"type": "command", '
                      '"command": ...}])')
    text = f.text("matcher", "") if event in MATCHED else f.get("matcher")
    try:
        return matcher(event, text), handlers, f.unknown()
    except MatcherError as err:
        raise f.error("matcher", f"{shown(text, 60)}: {err}") from None


def _skipped(handler: object) -> str | None:
    """Why Codex skips this handler (and initd with it), if it does."""
    if not isinstance(handler, Mapping):
        return None
    kind, command = handler.get("type"), handler.get("command")
    if kind in ("prompt", "agent"):
        return f"a {kind!r} hook: Codex does not run these yet, nor does initd"
    if kind == "command" and handler.get("async") is True:
        return "async: true: Codex skips async command hooks, and so does initd"
    if kind == "command" and isinstance(command, str) and not command.strip():
        return "an empty command: skipped, as Codex skips it"
    return None


def _hook(event: str, entry: object, path: str, key: str, matcher: CodexMatcher | None,
          scope: str, shell: str) -> EventHook:
    f = EventFields(entry, path, key)
    kind = f.get("type")
    if kind != "command":
        raise f.error("type", f'expected "command", got {shown(kind, 40)}')
    command = f.text("command", required=True)
    timeout = f.number("timeout", DEFAULT_TIMEOUT, positive=False, below=TIMEOUT_LIMIT,
                       unit="seconds")
    f.flag("async", False)
    f.text("statusMessage")  # Codex's spinner text, and Windows' own command
    f.text("commandWindows")
    return EventHook(event=event, dialect=NAME, source=path, key=key, label=command,
                     spec=Exec("/bin/sh", ("-c", RUN, command, shell)),
                     timeout=max(1.0, timeout), wait=True, workspace=scope == "project",
                     warnings=f.unknown(), matcher=matcher)


class Codex:
    """Codex's own rules: its matched hooks run together, read the event on stdin alone
    (Codex's own payload when Codex sent it), and answer as codex/answers.py reads."""

    name = NAME
    title = "OpenAI Codex"
    together = True
    stdin_only = True
    wire: Wire | None = codex_wire.WIRE

    def load(self, where: Where) -> Collected:
        return load(where.workspace, where.home)

    def files(self, where: Where) -> list[str]:
        return [path for path, _, _ in files(where.workspace, where.home)]

    def stdin(self, call: Call) -> dict[str, Any]:
        origin = call.origin
        if origin is not None and origin.agent == NAME:
            sent = origin.payload
        else:
            sent = shape.outward(call.payload, call.event, NAMES[call.event],
                                 str(call.variables.get("SESSION") or ""), call.workspace)
        return {"cwd": sent["cwd"], **sent} if "cwd" in sent else dict(sent)

    def verdict(self, result: ActionResult, hook: EventHook, event: Event) -> Verdict:
        return answers.answer(result, hook.label, event, hook.on_error == "deny")


DIALECT = Codex()
