"""Cursor's hooks: the ``hooks.json`` files of its hooks reference
(https://cursor.com/docs/agent/hooks, revision of 2026-08-24, "Configuration"), in its
order of priority: the enterprise file ``/etc/cursor/hooks.json`` (the image's), the
project's ``.cursor/hooks.json`` (trust may be required) and the user's
``~/.cursor/hooks.json``. Every matching hook of every file runs, together (Cursor's "All
matching hooks from every source run"), and a deny of any of them wins.

``{"version": 1, "hooks": {"beforeShellExecution": [{"command": "...", "timeout": 30,
"matcher": "curl|wget|nc ", "failClosed": true}]}}``: an event, its hooks. ``command``
runs as a shell line (bash; sh where the image has none) from the project root for the
project's file, from ``~/.cursor`` for the user's and ``/etc/cursor`` for the
enterprise's ("The working directory depends on the hook source"), with the event on
stdin (Cursor's own payload when Cursor sent it, else the event in Cursor's shape:
cursor/outward.py) and Cursor's variables: ``CURSOR_PROJECT_DIR`` and
``CLAUDE_PROJECT_DIR`` (the workspace), ``CURSOR_VERSION``, ``CURSOR_USER_EMAIL`` and
``CURSOR_TRANSCRIPT_PATH`` when the event says them, and what a sessionStart hook gave
in its ``env`` (the session's: the hook service's). ``timeout`` is in seconds (60 when
not given: the reference says "platform default"); ``failClosed: true`` makes a failure
(a crash, a timeout, no JSON) block the events that can be blocked; ``loop_limit`` caps
a stop or subagentStop hook's follow-ups (5; ``null``: no cap) by the event's
``loop_count``; ``matcher`` is a regular expression searched (RE2's, as Claude Code's:
claude/matchers.py) in the event's value: the tool (``Shell``, ``Read``, ``Write``,
``MCP:TOOL``…), the shell command, the subagent's type, or the fixed word of an event
(``Stop``). A ``"type": "prompt"`` hook needs Cursor's model: it stands in on its event
as an error, as does any hook or file initd cannot read (a blockable event is blocked).
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Mapping
from typing import Any

from initd.config.problems import WARNING, LoadError, Problem
from initd.errors import shown
from initd.events import sources
from initd.events.actions import ActionResult, Call
from initd.events.claude import matchers
from initd.events.cursor import answers, outward
from initd.events.cursor.matcher import CursorMatcher
from initd.events.cursor.names import EVENTS, FOLLOW_UPS, MATCHED, own_event
from initd.events.dialect import Where
from initd.events.loading import Collected, EventFields
from initd.events.model import Command, EventHook
from initd.events.verdict import Verdict
from initd.events.wire import Wire
from initd.events.wires import cursor as cursor_wire
from initd.hooks.kinds import Event

NAME = "cursor"
SCOPES = ("enterprise", "project", "user")  # sources.py's, in this order
DEFAULT_TIMEOUT = 60.0
TIMEOUT_LIMIT = 86_400.0  # a day; more is a typo (milliseconds?), refused
LOOP_LIMIT = 5


def files(workspace: str, home: str) -> list[tuple[str, str]]:
    """(path, scope) in the order they load: enterprise, project, user."""
    return [(path, scope) for (path, _), scope in
            zip(sources.paths(NAME, workspace, home), SCOPES, strict=True)]


def load(workspace: str, home: str, limits: dict[str, int | None]) -> Collected:
    """The files' hooks; ``limits`` gets each stop and subagentStop hook's loop_limit."""
    found = Collected(NAME)
    shell = "bash" if shutil.which("bash") else "sh"
    for path, scope in files(workspace, home):
        data = found.read(path, "json")
        if data is None:
            continue
        if not isinstance(data, dict):
            found.error(path, LoadError("expected a JSON object (Cursor's hooks.json), got "
                                        f"{shown(data, 40)}", path))
            continue
        version = data.get("version", 1)
        if version != 1 or isinstance(version, bool):
            found.error(path, LoadError(f"version {shown(version, 20)}: initd reads Cursor's "
                                        "hooks.json of version 1", path, "version"))
            continue
        for key in data:
            if key not in ("version", "hooks"):
                found.problems.append(Problem(path, str(key), "unknown key ignored", WARNING))
        hooks = data.get("hooks")
        if hooks is None:
            continue
        if not isinstance(hooks, Mapping):
            found.error(path, LoadError("expected a mapping of event name: [hooks]", path,
                                        "hooks"))
            continue
        where = Where(workspace, "", home)
        for name, entries in hooks.items():
            _event(found, path, scope, where, name, entries, shell, limits)
    return found


def _event(found: Collected, path: str, scope: str, where: Where, name: object,
           entries: object, shell: str, limits: dict[str, int | None]) -> None:
    for event, key, entry in found.agent_entries(path, name, entries, EVENTS, "Cursor",
                                                 'hooks ([{"command": ...}])'):
        found.hook(path, _hook, str(name), entry, path, key, scope, where, shell, limits,
                   event=event)


def _hook(name: str, entry: object, path: str, key: str, scope: str, where: Where,
          shell: str, limits: dict[str, int | None]) -> EventHook:
    f = EventFields(entry, path, key)
    if f.choice("type", ("command", "prompt"), "command") == "prompt":
        raise f.error("type", f"a \"prompt\" hook asks Cursor's model, which initd does not "
                      f"have: this gate will not gate. It stands in on {name} as an error "
                      "(which blocks a blockable event) until it is a command")
    command = f.text("command", required=True)
    timeout = f.number("timeout", DEFAULT_TIMEOUT, below=TIMEOUT_LIMIT, unit="seconds")
    closed = f.flag("failClosed", False)
    text = f.get("matcher")
    if text is not None and not isinstance(text, str):
        raise f.error("matcher", f"expected a regular expression (text), got {shown(text, 40)}")
    text = text or ""
    problem = matchers.regex_problem(text) if text else None
    if problem is not None:
        raise f.error("matcher", f"{shown(text, 60)}: {problem}")
    limit = _loop_limit(f)
    warnings = f.unknown()
    if text and name not in MATCHED:
        warnings += (f"{key}.matcher: {name} has no matcher: ignored (every occurrence runs "
                     "this hook)",)
        text = ""
    if name in FOLLOW_UPS:
        limits[f"{path}: {key}"] = limit
    directory = where.workspace if scope == "project" else path.rsplit("/", 1)[0] or "/"
    spec = Command(f"cd -- {shlex.quote(directory)} || exit 1  # {scope} {key}\n{command}",
                   shell)
    return EventHook(event=EVENTS[name], dialect=NAME, source=path, key=key, label=command,
                     spec=spec, timeout=timeout, wait=True,
                     on_error="deny" if closed else "allow", workspace=scope == "project",
                     warnings=warnings, matcher=CursorMatcher(
                         text, name, regex=text or None, root=where.workspace,
                         home=where.home))


def _loop_limit(f: EventFields) -> int | None:
    """``loop_limit``: a whole number >= 0, or null (no cap); 5 when not given."""
    if "loop_limit" not in f.data:
        return LOOP_LIMIT
    value = f.get("loop_limit")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise f.error("loop_limit", f"expected a whole number >= 0 or null, got "
                      f"{shown(value, 20)}")
    return value


class Cursor:
    """Cursor's own rules: its matched hooks run together and read the event on stdin
    alone; its answers mean what its reference says (cursor/answers.py)."""

    name = NAME
    title = "Cursor"
    together = True
    stdin_only = True
    wire: Wire | None = cursor_wire.WIRE

    def __init__(self) -> None:
        self.limits: dict[str, int | None] = {}  # a follow-up hook's loop_limit, by where
        self.env: dict[str, dict[str, str]] = {}  # what sessionStart gave, by workspace

    def load(self, where: Where) -> Collected:
        return load(where.workspace, where.home, self.limits)

    def files(self, where: Where) -> list[str]:
        return [path for path, _ in files(where.workspace, where.home)]

    def stdin(self, call: Call) -> dict[str, Any]:
        own = own_event(call.hook.key) or call.event
        if call.origin is not None and call.origin.agent == NAME and call.origin.name == own:
            return call.origin.payload
        return outward.outward(own, call)

    def prepare(self, call: Call) -> Call | None:
        """The hook's call as Cursor makes it (its variables, the session's ``env``, a
        follow-up past its loop_limit not read), or None: not this hook's event (Cursor
        sent one of its other events, which are the same event of initd's: a
        preToolUse of its Shell is its beforeShellExecution too, and Cursor sends both)."""
        own = own_event(call.hook.key)
        if own is None:
            return call
        if call.origin is not None and call.origin.agent == NAME and call.origin.name != own:
            return None
        given = call.stdin
        env = {**call.env, **{k: v for k, v in self.env.get(call.workspace, {}).items()
                              if k not in call.env}}
        env.update(CURSOR_PROJECT_DIR=call.workspace, CLAUDE_PROJECT_DIR=call.workspace)
        for variable, field in (("CURSOR_VERSION", "cursor_version"),
                                ("CURSOR_USER_EMAIL", "user_email"),
                                ("CURSOR_TRANSCRIPT_PATH", "transcript_path")):
            value = given.get(field)
            if isinstance(value, str) and value and "\0" not in value:
                env[variable] = value
        hook = call.hook
        limit = self.limits.get(hook.where, LOOP_LIMIT)
        count = given.get("loop_count")
        if own in FOLLOW_UPS and limit is not None and isinstance(count, int) and \
                count >= limit and isinstance(hook.spec, Command):
            said = shlex.quote(f"initd: loop_limit {limit} reached (loop_count {count}): "
                               "this hook's followup_message is not submitted")
            hook = hook._replace(spec=hook.spec._replace(
                command=f"echo {said} >&2\n{{ {hook.spec.command}\n}} >&2"))
        return call._replace(env=env, hook=hook)

    def verdict(self, result: ActionResult, hook: EventHook, event: Event) -> Verdict:
        said = answers.answer(result, hook, event)
        if own_event(hook.key) == "sessionStart" and hook.matcher is not None and said.specific:
            # its env (answers.session_env), for the hooks after it
            self.env.setdefault(hook.matcher.root, {}).update(said.specific["env"])
        return said


DIALECT = Cursor()
