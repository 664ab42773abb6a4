"""VS Code's agent hooks, its Local harness's (https://code.visualstudio.com/docs/
agent-customization/hooks; https://code.visualstudio.com/docs/agents/reference/
hooks-reference, 2026-09-16): every ``*.json`` of the workspace's ``.github/hooks`` and of
the user's ``~/.copilot/hooks``, then what ``chat.hookFilesLocations`` adds
(sources.py), each file's commands concatenated in that order.

``{"hooks": {"PreToolUse": [{"type": "command", "command": "./check.sh", "linux": "...",
"cwd": "scripts", "env": {"K": "v"}, "timeout": 15}]}}``: an event and its commands, no
matcher. A Copilot hooks file (a numeric ``version``, lowerCamelCase events:
``preToolUse``, ``agentStop``…, ``bash`` for ``linux``, ``timeoutSec`` for ``timeout``)
is read with its own names, as VS Code reads them in any file; a Claude Code matcher group
(``{"matcher", "hooks": [...]}``) gives its commands, its matcher ignored, as VS Code does.
On Linux a command is its ``linux`` (or ``bash``), else ``command``, run by ``sh -c`` from
``cwd`` (relative to the workspace, ``~`` the home; the workspace by default) with ``env``
added; ``timeout`` seconds, 30 by default. The hooks of an event run one after another,
all of them (a deny does not stop the next): the most restrictive answer wins.

The organisation's policy ``/etc/vscode/policy.json`` ``{"ChatHooks": false}``, or the
user's ``chat.useHooks: false`` (``~/.config/Code/User/settings.json``), turns every VS
Code hook off; the workspace's ``.vscode/settings.json`` cannot (initd's choice).

Fail closed where VS Code goes on (invariant 12): a file that does not parse, a command
initd cannot load (a ``type`` other than ``command``, a bad ``timeout``, ``cwd`` or
``env``) stands in as an error on its event, which blocks a blockable one; an unknown
event name is an error naming the file and the name (VS Code skips it silently)."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from typing import Any

from initd.config.problems import NOTE, WARNING, LoadError, Problem
from initd.errors import shown
from initd.events import sources
from initd.events.actions import ActionResult, Call
from initd.events.dialect import Where
from initd.events.loading import Collected, EventFields
from initd.events.model import Command, EventHook
from initd.events.verdict import Verdict
from initd.events.wire import Wire
from initd.events.wires import vscode as vscode_wire
from initd.events.wires.vscode import EVENTS, verdict
from initd.hooks import workspacefiles
from initd.hooks.kinds import Event
from initd.state import agentfs

NAME = "vscode"
DEFAULT_TIMEOUT = 30.0  # seconds: "Timeout in seconds. The default is 30 seconds."
TIMEOUT_LIMIT = 86_400.0  # a day; more is a typo (milliseconds?), refused
# Copilot's names (hookTypes.ts HOOKS_BY_TARGET[GitHubCopilot]), read in any file
COPILOT = {"sessionStart": "SessionStart", "userPromptSubmitted": "UserPromptSubmit",
           "preToolUse": "PreToolUse", "postToolUse": "PostToolUse", "agentStop": "Stop",
           "subagentStop": "SubagentStop"}
UNFIRED = ("SessionEnd", "ErrorOccurred", "sessionEnd", "errorOccurred")  # Local never fires
PLATFORMS = ("windows", "osx", "powershell")  # other platforms' commands
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def load(workspace: str, home: str) -> Collected:
    found = Collected(NAME)
    policy, user_file, project_file, *_ = (p for p, _ in sources.paths(NAME, workspace, home))
    data = found.read(policy, "json")
    if isinstance(data, dict) and data.get("ChatHooks") is False:  # (nothing else is read)
        found.problems.append(Problem(policy, "ChatHooks", "no VS Code hook runs", NOTE))
        return found
    user, project = _settings(found, user_file), _settings(found, project_file)
    if isinstance(project, dict) and project.get("chat.useHooks") is False:
        found.problems.append(Problem(project_file, "chat.useHooks", "a workspace's "
                                      "settings turn no hook off (the user's may)", WARNING))
    if isinstance(user, dict) and user.get("chat.useHooks") is False:
        found.problems.append(Problem(user_file, "chat.useHooks", "no VS Code hook runs",
                                      NOTE))
        return found
    located, said = sources.vscode_locations(workspace, home, user, project)
    for scope, key, text in said:
        found.problems.append(Problem(user_file if scope == "user" else project_file, key,
                                      text, WARNING))
    for place in located:
        files = _listed(found, place.path) if place.folder else [place.path]
        for path in files:
            _file(found, path, place.workspace, workspace, home)
    return found


def _settings(found: Collected, path: str) -> Any:
    """A VS Code settings file (JSON with comments); None when there is none, or when it
    cannot be read (its error: what it adds or turns off is not known)."""
    try:
        raw, _ = workspacefiles.read(path, sources.CONFIG_LIMIT, whole=True)
        return sources.jsonc(raw.decode("utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except agentfs.Unsafe as err:
        found.error(path, LoadError(str(err).removeprefix(f"{path}: "), path))
    except (OSError, UnicodeDecodeError) as err:
        found.error(path, LoadError(f"cannot read: {err}", path))
    except (ValueError, RecursionError) as err:
        found.error(path, LoadError(f"not valid JSON (with comments): {err}", path))
    return None


def _listed(found: Collected, folder: str) -> list[str]:
    """The ``*.json`` files of a hooks folder, in name order."""
    try:
        names, more = workspacefiles.names(folder, workspacefiles.MAX_NAMES,
                                           workspacefiles.SCAN_LIMIT)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as err:
        found.error(folder, LoadError(f"cannot list: {err.strerror or err}", folder))
        return []
    if more:  # (a guard may be among the names not read)
        found.error(folder, LoadError(f"more than {workspacefiles.MAX_NAMES} names: the "
                                      "rest are not read", folder))
    return [os.path.join(folder, name) for name in names if sources.vscode_file(name)]


def _file(found: Collected, path: str, in_workspace: bool, workspace: str, home: str) -> None:
    data = found.read(path, "json")
    if data is None:
        return
    if not isinstance(data, dict) or not isinstance(data.get("hooks"), Mapping):
        found.error(path, LoadError('expected {"hooks": {EVENT: [commands]}} (a VS Code '
                                    f"hook file), got {shown(data, 40)}", path))
        return
    for name, entries in data["hooks"].items():
        _event(found, path, name, entries, in_workspace, workspace, home)


def _event(found: Collected, path: str, name: object, entries: object, in_workspace: bool,
           workspace: str, home: str) -> None:
    key = f"hooks.{name}"
    said = COPILOT.get(name, name) if isinstance(name, str) else None
    event = EVENTS.get(said) if isinstance(said, str) else None
    if event is None:
        if said in UNFIRED:
            found.problems.append(Problem(path, key, "VS Code's Local harness never fires "
                                          "this event: not run", WARNING))
            return
        found.error(path, LoadError(f"unknown VS Code hook event {shown(name, 40)} (its "
                                    f"events: {', '.join(EVENTS)}; or Copilot's: "
                                    f"{', '.join(COPILOT)})", path, key), event=None)
        return
    if not isinstance(entries, list):
        found.error(path, LoadError("expected a list of commands", path, key), event)
        return
    for index, entry in enumerate(entries):
        ekey = f"{key}[{index}]"
        nested = entry.get("hooks") if isinstance(entry, Mapping) else None
        if isinstance(entry, Mapping) and isinstance(nested, list):
            if entry.get("matcher") not in (None, "", "*"):
                found.problems.append(Problem(path, f"{ekey}.matcher", "ignored, as VS Code "
                                              "ignores it: every command runs", WARNING))
            handlers = [(f"{ekey}.hooks[{at}]", one) for at, one in enumerate(nested)]
        else:
            handlers = [(ekey, entry)]
        for hkey, handler in handlers:
            if _elsewhere(handler):
                found.problems.append(Problem(path, hkey, "no command for Linux (only "
                                              "another platform's): not run", WARNING))
                continue
            found.hook(path, _hook, event, handler, path, hkey, in_workspace, workspace,
                       home, event=event)


def _elsewhere(entry: object) -> bool:
    """A command for other platforms only (VS Code runs none on Linux)."""
    return isinstance(entry, Mapping) and not any(
        isinstance(entry.get(k), str) and entry[k] for k in ("linux", "bash", "command")
    ) and any(isinstance(entry.get(k), str) and entry[k] for k in PLATFORMS)


def _hook(event: str, entry: object, path: str, key: str, in_workspace: bool,
          workspace: str, home: str) -> EventHook:
    f = EventFields(entry, path, key)
    kind = f.get("type")
    if kind not in (None, "command"):
        raise f.error("type", f'expected "command", got {shown(kind, 40)} (VS Code drops '
                      "it: a guard that never runs; it stands in as an error)")
    for other in PLATFORMS:
        f.text(other)
    linux, bash, command = f.text("linux"), f.text("bash"), f.text("command")
    line = linux or bash or command
    if not line or not line.strip():
        raise f.error("command", "required (or linux, or bash): the command to run")
    seconds = f.number("timeout", f.number("timeoutSec", DEFAULT_TIMEOUT), unit="seconds")
    if seconds > TIMEOUT_LIMIT:
        raise f.error("timeout", f"{seconds:g} seconds: at most {TIMEOUT_LIMIT:g} (a day); "
                      "VS Code's timeout is in seconds, not milliseconds")
    cwd = f.text("cwd")
    env = _env(f)
    return EventHook(
        event=event, dialect=NAME, source=path, key=key, label=line,
        spec=Command(_wrapped(line, _cwd(cwd, workspace, home), env), "sh"),
        timeout=seconds, wait=True, workspace=in_workspace, warnings=f.unknown())


def _env(f: EventFields) -> dict[str, str]:
    env = f.mapping("env") or {}
    for name, value in env.items():
        if not isinstance(value, str) or "\0" in value:
            raise f.error(f"env.{name}", f"expected text, got {shown(value, 40)}")
        if not ENV_NAME.fullmatch(name):
            raise f.error("env", f"{shown(name, 40)}: not a variable's name")
    return env


def _cwd(cwd: str | None, workspace: str, home: str) -> str | None:
    """hookSchema.ts resolveHookCommand: ``~`` is the home, an absolute path itself, any
    other relative to the workspace (None: the workspace, where every hook runs)."""
    if not cwd:
        return None
    if cwd == "~" or cwd.startswith("~/"):
        cwd = os.path.join(home, cwd[2:])
    return os.path.normpath(os.path.join(workspace, cwd))


def _wrapped(line: str, cwd: str | None, env: dict[str, str]) -> str:
    """The command as ``sh -c`` runs it: from ``cwd`` (one that is not there: exit 1, a
    warning, as VS Code's spawn error is), ``env`` exported, then the line as written."""
    before = [f"cd -- {shlex.quote(cwd)} || exit 1"] if cwd else []
    before += [f"export {name}={shlex.quote(value)}" for name, value in env.items()]
    return "\n".join([*before, line])


class VSCode:
    """VS Code's own rules: the hooks of an event run one after another and all of them,
    even after a deny (``gathers``); they read the event on stdin alone, in VS Code's
    shape; their answers mean what VS Code reads them to (wires/vscode.py)."""

    name = NAME
    title = "VS Code"
    together = False
    gathers = True
    stdin_only = True
    wire: Wire | None = vscode_wire.WIRE

    def load(self, where: Where) -> Collected:
        return load(where.workspace, where.home)

    def files(self, where: Where) -> list[str]:
        """The settings, the folders and their ``*.json``, the files the settings add."""
        def read(path: str) -> bytes:
            return workspacefiles.read(path, sources.CONFIG_LIMIT, whole=True)[0]

        found = [path for path, _ in sources.paths(NAME, where.workspace, where.home)]
        files, folders = sources.vscode_added(where.workspace, where.home, read)
        for folder in [*found[3:], *folders]:
            try:
                names, _ = workspacefiles.names(folder, workspacefiles.MAX_NAMES,
                                                workspacefiles.SCAN_LIMIT)
            except OSError:
                continue
            found += [os.path.join(folder, n) for n in names if sources.vscode_file(n)]
        return found + files + folders

    def stdin(self, call: Call) -> dict[str, Any]:
        return vscode_wire.stdin(call)

    def verdict(self, result: ActionResult, hook: EventHook, event: Event) -> Verdict:
        return verdict(result, hook, event)


DIALECT = VSCode()
