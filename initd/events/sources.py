"""The one list of hook formats, and where each keeps its files: the table the dialects'
``files`` come from, and what the guard snapshot takes before the agent's first
instruction (guardset.py, ARCHITECTURE.md invariant 15).

The standard library only (``os``; for VS Code's settings ``json`` and config/jsonc.py,
which needs no more): root's supervisor reads this table at every boot with a workspace,
to know whether there is anything to take, and the snapshot's reader (a process of its
own, as the agent) imports nothing heavier.

A source is (base, path): ``workspace`` and ``home`` (the agent user's) are the trees the
agent can write; ``image`` is a path of the image's own (root's: the managed settings),
read as it is when the hook service starts, never snapshotted. The discobot format's
source is a directory of scripts, each a hook (HOOKS_DIR); VS Code's are folders of config
files, each ``*.json`` in one a file of hooks (FOLDERS); the rest are config files.
"""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

from initd.config.jsonc import strip as strip_comments

WORKSPACE, HOME, IMAGE = "workspace", "home", "image"
CONFIG_LIMIT = 2**20  # a hook config is a few KiB; a bigger file is not read
HOOKS_DIR = (WORKSPACE, os.path.join(".discobot", "hooks"))  # (config/paths.workspace_hooks)
FOLDERS = ((WORKSPACE, ".github/hooks"), (HOME, ".copilot/hooks"))  # VS Code's *.json

# dialect name (events/model.DialectName's value) -> its sources, in the order it loads
# them: the one list of formats, in the order their hooks run (a row here is a format:
# its loader is events/dialects/NAME.py, events/dialects/__init__.py's DIALECTS)
SOURCES: dict[str, tuple[tuple[str, str], ...]] = {
    "discobot": (HOOKS_DIR,),
    "iteratr": ((WORKSPACE, ".iteratr.hooks.yml"),),
    "nyzhi": ((HOME, ".config/nyzhi/config.toml"), (WORKSPACE, ".nyzhi/config.toml"),
              (WORKSPACE, ".nyzhi/config.local.toml")),
    "autoagent": ((HOME, ".autoagent/config.json"), (WORKSPACE, ".autoagent/config.json")),
    "pipelines": ((HOME, ".config/agent-pipelines/hooks.yaml"), (WORKSPACE, "pipeline.yaml"),
                  (WORKSPACE, "loop.yaml"), (WORKSPACE, "stage.yaml")),
    "claude": ((IMAGE, "/etc/claude-code/managed-settings.json"),
               (HOME, ".claude/settings.json"), (WORKSPACE, ".claude/settings.json"),
               (WORKSPACE, ".claude/settings.local.json")),
    "codex": ((IMAGE, "/etc/codex/requirements.toml"), (IMAGE, "/etc/codex/hooks.json"),
              (IMAGE, "/etc/codex/config.toml"), (HOME, ".codex/hooks.json"),
              (HOME, ".codex/config.toml"), (WORKSPACE, ".codex/hooks.json"),
              (WORKSPACE, ".codex/config.toml")),
    "vscode": ((IMAGE, "/etc/vscode/policy.json"), (HOME, ".config/Code/User/settings.json"),
               (WORKSPACE, ".vscode/settings.json"), *FOLDERS),
    "gemini": ((IMAGE, "/etc/gemini-cli/system-defaults.json"), (HOME, ".gemini/settings.json"),
               (WORKSPACE, ".gemini/settings.json"), (IMAGE, "/etc/gemini-cli/settings.json")),
    "cursor": ((IMAGE, "/etc/cursor/hooks.json"), (WORKSPACE, ".cursor/hooks.json"),
               (HOME, ".cursor/hooks.json")),
}
# the formats whose agent calls initd (``initd emit --from NAME``): each one's wire is
# events/wires/NAME.py, imported alone (events/wires/__init__.py)
AGENTS = ("claude", "codex", "vscode", "gemini", "cursor")
# variables that name an image's file in place of its row above (Gemini CLI's): initd's
# own environment's, never the workspace's (devcontainer.json's containerEnv)
IMAGE_VARIABLES = ("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", "GEMINI_CLI_SYSTEM_SETTINGS_PATH")


def paths(dialect: str, workspace: str, home: str) -> list[tuple[str, str]]:
    """(path, base) of each of ``dialect``'s sources, in the order it loads them."""
    bases = {WORKSPACE: workspace, HOME: home, IMAGE: "/"}
    return [(os.path.join(bases[base], path), base) for base, path in SOURCES[dialect]]


def owned(dialect: str, workspace: str, home: str) -> list[tuple[str, bool]]:
    """(path, written by the workspace) of each of ``dialect``'s sources, in load order."""
    return [(path, base == WORKSPACE) for path, base in paths(dialect, workspace, home)]


def agents(workspace: str, home: str) -> tuple[list[str], list[str]]:
    """What the agent can write of every format's sources: (config files, hook
    directories). The home's are left out when there is none to speak of (an agent with
    no home of its own: ``/``, or none given)."""
    configs: list[str] = []
    directories: list[str] = []
    for entries in SOURCES.values():
        for base, rel in entries:
            if base == IMAGE or (base == HOME and home in ("", "/")):
                continue
            path = os.path.join(workspace if base == WORKSPACE else home, rel)
            listed = (base, rel) == HOOKS_DIR or (base, rel) in FOLDERS
            (directories if listed else configs).append(path)
    return configs, directories


def any_present(workspace: str, home: str) -> bool:
    """Whether any source the agent can write is there now: one ``lstat`` each (a dozen),
    so a workspace with none starts its agent without a reader (nothing to take)."""
    configs, directories = agents(workspace, home)
    return any(os.path.lexists(path) for path in (*configs, *directories))


# --------------------------------------------------------------------------------------
# Where VS Code's Local harness finds its hook files (https://code.visualstudio.com/docs/
# agent-customization/hooks, "Local hook file locations"): every ``*.json`` of its FOLDERS,
# and the folders and files ``chat.hookFilesLocations`` adds ("Specify a folder to load
# all its `*.json` files, or specify an individual `.json` file. Paths can be relative to
# the workspace or start with `~`"), or drops (``false``). initd reads that setting from
# the user's settings and the workspace's, which may only add: a repository turns no
# location off (initd's choice, as for Claude Code's ``disableAllHooks``). A location
# outside the workspace and the home is not read (root's verbs read these files too), nor
# a Claude Code settings file (initd reads Claude Code's own as Claude Code's). Here, with
# the table, because the snapshot's reader takes what the settings add with the rest.

VSCODE = "vscode"
SETTING = "chat.hookFilesLocations"  # (VS Code's, adding or dropping its hook files)


class Location(NamedTuple):
    path: str
    folder: bool  # every *.json in it (else the one file)
    workspace: bool  # in the workspace: trust may apply


def jsonc(text: str) -> Any:
    """VS Code's settings files are JSON with comments and trailing commas (config/jsonc.py,
    devcontainer.json's reader; a JSONCError is a ValueError)."""
    return json.loads(strip_comments(text))


def vscode_file(name: str) -> bool:
    """A name in a hooks folder that is a hook file."""
    return name.endswith(".json")


def vscode_settings(workspace: str, home: str) -> tuple[str, str]:
    """(the user's settings.json, the workspace's .vscode/settings.json)."""
    _, user, project, *_ = (path for path, _ in paths(VSCODE, workspace, home))
    return user, project


def vscode_locations(workspace: str, home: str, user: object, project: object
              ) -> tuple[list[Location], list[tuple[str, str, str]]]:
    """The hook files' locations in the order VS Code reads them (the two folders, then
    what the user's and the workspace's ``chat.hookFilesLocations`` add), and what was not
    taken: (its settings' scope, "user" or "workspace", its key, why)."""
    *_, github, copilot = (path for path, _ in paths(VSCODE, workspace, home))
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
                found.append(Location(where, not vscode_file(where), _inside(where, workspace)))
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


def vscode_added(workspace: str, home: str, read: Any) -> tuple[list[str], list[str]]:
    """(files, folders) the settings add to VS Code's row of SOURCES, the settings read by ``read``
    (a path's bytes; OSError or ValueError: not there, or not read): for the snapshot."""
    parsed = []
    for path in vscode_settings(workspace, home):
        try:
            parsed.append(jsonc(read(path).decode("utf-8")))
        except (OSError, ValueError, RecursionError):
            parsed.append(None)
    built = {path for path, _ in paths(VSCODE, workspace, home)}
    found, _ = vscode_locations(workspace, home, *parsed)
    extra = [place for place in found if place.path not in built]
    return ([p.path for p in extra if not p.folder], [p.path for p in extra if p.folder])
