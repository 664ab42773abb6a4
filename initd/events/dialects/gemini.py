"""Gemini CLI's hooks: the ``hooks`` of its settings files, JSON with comments, in the
order Gemini merges them (https://geminicli.com/docs/reference/configuration, "Settings
files"; @google/gemini-cli 0.61.0): the system defaults ``/etc/gemini-cli/
system-defaults.json`` (the image's), the user's ``~/.gemini/settings.json``, the
project's ``.gemini/settings.json`` (trust may be required) and the system settings
``/etc/gemini-cli/settings.json`` (the image's). Every level's hooks run: each event's
list is concatenated ("mergeStrategy: CONCAT").

``{"hooks": {"BeforeTool": [{"matcher": "write_file|replace", "sequential": true,
"hooks": [{"type": "command", "command": "...", "name": "...", "timeout": 5000}]}]}}``:
``matcher`` is a regular expression searched in the tool's name, as Gemini names it, on
BeforeTool and AfterTool, the exact source, reason or trigger on SessionStart, SessionEnd
and PreCompress (``*``, ``""`` or none: every one), ignored elsewhere; ``timeout`` is in
milliseconds (60000 by default); the matched hooks of an event run at once, or one after
another when one of their definitions says ``sequential: true``; the same ``name`` and
``command`` run once. A hook runs by ``bash -c`` as written, with ``GEMINI_PROJECT_DIR``
and ``CLAUDE_PROJECT_DIR`` (the workspace, which ``$GEMINI_PROJECT_DIR`` and
``$CLAUDE_PROJECT_DIR`` in the command are, quoted), ``GEMINI_CWD``,
``GEMINI_SESSION_ID`` (the event's ``cwd`` and ``session_id``) and its own ``env``.

``hooksConfig.enabled: false`` and ``hooksConfig.disabled`` (names, or commands) are read
as Gemini reads them, except that a file the agent writes decides nothing about the
hooks of the files above it (initd's choice, as for Claude Code's ``disableAllHooks``):
the image's files about every hook (the system file's ``enabled`` over all), the user's
about the user's and the project's, the project's about its own. What its hooks answer
is read by gemini/answers.py; the agent calls initd by wires/gemini.py."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping
from typing import Any

from initd.config.problems import NOTE, WARNING, LoadError, Problem
from initd.errors import shown
from initd.events.actions import ActionResult, Call
from initd.events.claude import matchers
from initd.events.dialect import Where, own_name
from initd.events.gemini import answers as geminianswers
from initd.events.gemini import settings as geminifiles
from initd.events.loading import Collected, EventFields
from initd.events.model import AgentCommand, EventHook
from initd.events.verdict import Verdict
from initd.events.wire import Wire
from initd.events.wires import gemini as geminiwire
from initd.hooks.kinds import Event

NAME = geminiwire.AGENT
LEVELS = geminifiles.LEVELS  # defaults, user, project, system: sources.py's order
DEFAULT_TIMEOUT = 60_000.0  # milliseconds: "timeout ... (default: 60000)"
TIMEOUT_LIMIT = 86_400_000.0  # a day, in milliseconds; more is a typo
CONFIG_KEYS = ("enabled", "disabled", "notifications")  # HOOKS_CONFIG_FIELDS: no events
TRIGGERS = {"session_start": "source", "session_end": "reason", "pre_compact": "trigger"}
INPUTS = {"GEMINI_SESSION_ID": "session_id", "GEMINI_CWD": "cwd"}
NO_BASH = ("no bash in this image: Gemini CLI's command hooks run with sh (bash syntax such "
           "as [[ ]] fails there)")


class GeminiMatcher(matchers.Matcher):
    """A matcher tested on the tool's name as Gemini names it (``run_shell_command``, not
    initd's ``Bash``), whichever agent sent the event."""

    def matches(self, payload: Mapping[str, Any]) -> bool:
        tool = payload.get(matchers.TOOL_FIELD)
        if self.field == matchers.TOOL_FIELD and isinstance(tool, str):
            payload = {**payload, matchers.TOOL_FIELD: geminiwire.theirs(tool)}
        return super().matches(payload)


def matcher(event: str, text: str | None) -> GeminiMatcher:
    """A definition's ``matcher``: on a tool event a regular expression, searched (one
    that is none, in JavaScript's terms, is the exact name, as Gemini falls back to);
    MatcherError for one RE2 cannot run (a lookaround)."""
    text = (text or "").strip()
    field = matchers.TOOL_FIELD if event in ("pre_tool", "post_tool") else TRIGGERS.get(event)
    if text in ("", "*") or field is None:
        return GeminiMatcher(text, field)
    if field != matchers.TOOL_FIELD:
        return GeminiMatcher(text, field, (text,))
    problem = matchers.regex_problem(text)
    if problem is None:
        return GeminiMatcher(text, field, regex=text)
    try:
        re.compile(text)
    except re.error:  # no regular expression at all: the name itself
        return GeminiMatcher(text, field, (text,))
    raise matchers.MatcherError(problem)


def load(workspace: str, home: str, env: Mapping[str, str] = os.environ) -> Collected:
    found = Collected(NAME)
    entries, problems = geminifiles.files(workspace, home, env)
    found.problems += problems
    settings: list[tuple[str, str, dict[str, Any]]] = []
    for path, level in entries:
        data = found.read(path, "jsonc")
        if data is None:
            continue
        if not isinstance(data, dict):
            found.error(path, LoadError("expected a JSON object (Gemini CLI's settings), "
                                        f"got {shown(data, 40)}", path))
            continue
        settings.append((path, level, data))
    on, off = geminifiles.switches(found, settings)
    shell = "bash" if shutil.which("bash") else "sh"
    for path, level, data in settings:
        hooks = data.get("hooks")
        if hooks is None:
            continue
        if not isinstance(hooks, Mapping):
            found.error(path, LoadError("expected a mapping of event name: [hook "
                                        "definitions]", path, "hooks"))
            continue
        if not on[level]:
            found.problems.append(Problem(path, "hooks", "not run (hooksConfig.enabled: "
                                          "false)", NOTE))
            continue
        for name, definitions in hooks.items():
            if name not in CONFIG_KEYS:
                _event(found, (path, level, workspace, shell, off[level]), name,
                       definitions)
    if shell == "sh" and found.hooks:
        found.problems.append(Problem("", None, NO_BASH, WARNING))  # said once, at load
    return found


def _event(found: Collected, where: tuple[str, str, str, str, set[str]], name: object,
           definitions: object) -> None:
    path = where[0]
    for event, dkey, definition in found.agent_entries(
            path, name, definitions, geminiwire.EVENTS, "Gemini CLI",
            'hook definitions ([{"matcher": ..., "hooks": [...]}])'):
        try:
            f = EventFields(definition, path, dkey)
            sequential = f.flag("sequential", False)
            handlers = f.get("hooks")
            if not isinstance(handlers, list):
                raise f.error("hooks", 'expected a list of hooks ([{"type": "command", '
                              '"command": ...}])')
            text = f.text("matcher")
            try:
                found_matcher = matcher(event, text)
            except matchers.MatcherError as err:
                raise f.error("matcher", f"{shown(text, 60)}: {err}") from None
        except LoadError as err:
            found.error(path, err, event)
            continue
        for warning in f.unknown():
            found.problems.append(Problem(path, None, warning, WARNING))
        for at, handler in enumerate(handlers):
            hkey = f"{dkey}.hooks[{at}]"
            if isinstance(handler, Mapping) and (handler.get("name") or handler.get(
                    "command")) in where[4]:
                found.problems.append(Problem(path, hkey, "not run (hooksConfig.disabled "
                                              "names it)", NOTE))
                continue
            found.hook(path, _hook, event, handler, hkey, where, found_matcher, sequential,
                       event=event)


def _hook(event: str, entry: object, key: str, where: tuple[str, str, str, str, set[str]],
          found_matcher: GeminiMatcher, sequential: bool) -> EventHook:
    path, level, workspace, shell, _ = where
    f = EventFields(entry, path, key)
    kind = f.get("type")
    if kind != "command":
        raise f.error("type", f'expected "command" (Gemini CLI\'s hooks of a settings '
                      f'file), got {shown(kind, 40)}')
    command = f.text("command", required=True)
    name = f.text("name", "")
    f.text("description")
    timeout = f.number("timeout", DEFAULT_TIMEOUT, unit="milliseconds", below=TIMEOUT_LIMIT)
    own = f.mapping("env") or {}
    if not all(isinstance(v, str) and "\0" not in v + k for k, v in own.items()):
        raise f.error("env", "expected a mapping of variable name: text")
    quoted = shlex.quote(workspace)
    expanded = command.replace("$GEMINI_PROJECT_DIR", quoted).replace(
        "$CLAUDE_PROJECT_DIR", quoted)
    spec = AgentCommand(expanded, shell, {"GEMINI_PROJECT_DIR": workspace,
                                          "CLAUDE_PROJECT_DIR": workspace, **own},
                        dict(INPUTS), name)
    return EventHook(event=event, dialect=NAME, source=path, key=key, label=command,
                     spec=spec, timeout=timeout / 1000, wait=True,
                     workspace=level == "project", warnings=f.unknown(),
                     matcher=found_matcher, sequential=sequential)


class Gemini:
    """Gemini CLI's own rules: its matched hooks run at once (or in order: ``sequential``)
    and read the event on stdin alone, as Gemini sends it; what they answer means what its
    reference says (gemini/answers.py)."""

    name = NAME
    title = "Gemini CLI"
    together = True
    stdin_only = True
    wire: Wire | None = geminiwire.WIRE

    def load(self, where: Where) -> Collected:
        return load(where.workspace, where.home)

    def files(self, where: Where) -> list[str]:
        return [path for path, _ in geminifiles.files(where.workspace, where.home)[0]]

    def stdin(self, call: Call) -> dict[str, Any]:
        if call.origin is not None and call.origin.agent == NAME:
            return dict(call.origin.payload)
        return geminiwire.outbound(call.payload, own_name(call), call.workspace,
                                   str(call.variables.get("SESSION") or ""))

    def verdict(self, result: ActionResult, hook: EventHook, event: Event) -> Verdict:
        return geminianswers.verdict(result, hook, event)


DIALECT = Gemini()
