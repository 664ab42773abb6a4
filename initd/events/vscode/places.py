"""Where VS Code's Local harness finds its hook files (https://code.visualstudio.com/docs/
agent-customization/hooks, "Local hook file locations"): every ``*.json`` of the
workspace's ``.github/hooks`` and of the user's ``~/.copilot/hooks``, and the folders and
files ``chat.hookFilesLocations`` adds ("Specify a folder to load all its `*.json` files,
or specify an individual `.json` file. Paths can be relative to the workspace or start
with `~`"), or drops (``false``).

initd reads that setting from the user's settings (``~/.config/Code/User/settings.json``)
and the workspace's (``.vscode/settings.json``), which may only add: a repository turns
no location off (initd's choice, as for Claude Code's ``disableAllHooks``). A location
outside the workspace and the home is not read (root's verbs read these files too), nor
a Claude Code settings file (initd reads Claude Code's own as Claude Code's).

Standard library only: the guard snapshot's reader (guardset.take) imports this, to take
the locations the settings add with the rest (invariant 15)."""

from __future__ import annotations

import json
import os
import re
from typing import Any, NamedTuple

from initd.events import sources

NAME = "vscode"
SETTING = "chat.hookFilesLocations"
_STRING = r'"(?:[^"\\\n]|\\.)*"'
_COMMENTS = re.compile(_STRING + r"|//[^\n]*|/\*.*?\*/", re.S)
_COMMAS = re.compile(_STRING + r"|,(\s*[}\]])")


class Location(NamedTuple):
    path: str
    folder: bool  # every *.json in it (else the one file)
    workspace: bool  # in the workspace: trust may apply


def jsonc(text: str) -> Any:
    """VS Code's settings files are JSON with comments and trailing commas."""
    bare = _COMMENTS.sub(lambda m: m.group(0) if m.group(0).startswith('"') else " ", text)
    bare = _COMMAS.sub(lambda m: m.group(0) if m.group(1) is None else m.group(1), bare)
    return json.loads(bare)


def hook_file(name: str) -> bool:
    """A name in a hooks folder that is a hook file."""
    return name.endswith(".json")


def settings_files(workspace: str, home: str) -> tuple[str, str]:
    """(the user's settings.json, the workspace's .vscode/settings.json)."""
    _, user, project, *_ = (path for path, _ in sources.paths(NAME, workspace, home))
    return user, project


def locations(workspace: str, home: str, user: object, project: object
              ) -> tuple[list[Location], list[tuple[str, str, str]]]:
    """The hook files' locations in the order VS Code reads them (the two folders, then
    what the user's and the workspace's ``chat.hookFilesLocations`` add), and what was not
    taken: (its settings' scope, "user" or "workspace", its key, why)."""
    *_, github, copilot = (path for path, _ in sources.paths(NAME, workspace, home))
    found = [Location(github, True, True)]
    if home not in ("", "/"):
        found.append(Location(copilot, True, False))
    said: list[tuple[str, str, str]] = []
    for scope, settings in (("user", user), ("workspace", project)):
        table = settings.get(SETTING) if isinstance(settings, dict) else None
        if table is None:
            continue
        if not isinstance(table, dict):
            said.append((scope, SETTING, "expected a mapping of path: true or false"))
            continue
        for key, on in table.items():
            where, why = _resolve(key, on, workspace, home, scope)
            if where is None:
                said.append((scope, f"{SETTING}.{key}", why))
            elif on is False:
                found = [place for place in found if place.path != where]
            elif all(place.path != where for place in found):
                found.append(Location(where, not hook_file(where), _inside(where, workspace)))
    return found, said


def _resolve(key: str, on: object, workspace: str, home: str, scope: str
             ) -> tuple[str | None, str]:
    if not isinstance(on, bool):
        return None, "expected true or false: not read"
    if key == "~" or key.startswith("~/"):
        if home in ("", "/"):
            return None, "no home: not read"
        path = os.path.join(home, key[2:])
    else:
        path = os.path.join(workspace, key)  # (an absolute key stays itself)
    path = os.path.normpath(path)
    if os.path.basename(path) in ("settings.json", "settings.local.json") and \
            os.path.basename(os.path.dirname(path)) == ".claude":
        return None, ("a Claude Code settings file: initd reads Claude Code's own as Claude "
                      "Code's, whatever this says")
    if not (_inside(path, workspace) or _inside(path, home)):
        return None, "outside the workspace and the home: not read"
    if on is False and scope == "workspace":
        return None, "a workspace's settings turn no hook location off (the user's may)"
    return path, ""


def _inside(path: str, base: str) -> bool:
    return base not in ("", "/") and (path == base or path.startswith(base.rstrip("/") + "/"))


def added(workspace: str, home: str, read: Any) -> tuple[list[str], list[str]]:
    """(files, folders) the settings add to sources.py's, the settings read by ``read``
    (a path's bytes; OSError or ValueError: not there, or not read): for the snapshot."""
    parsed = []
    for path in settings_files(workspace, home):
        try:
            parsed.append(jsonc(read(path).decode("utf-8")))
        except (OSError, ValueError, RecursionError):
            parsed.append(None)
    built = {path for path, _ in sources.paths(NAME, workspace, home)}
    found, _ = locations(workspace, home, *parsed)
    extra = [place for place in found if place.path not in built]
    return ([p.path for p in extra if not p.folder], [p.path for p in extra if p.folder])
