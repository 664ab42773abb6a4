"""Where each hook format keeps its files: the one table the dialects' ``files`` come from,
and what the guard snapshot takes before the agent's first instruction (guardset.py,
ARCHITECTURE.md invariant 15).

Standard library ``os`` only: root's supervisor reads this table at every boot with a
workspace, to know whether there is anything to take, and the snapshot's reader (a
process of its own, as the agent) imports nothing heavier.

A source is (base, path): ``workspace`` and ``home`` (the agent user's) are the trees the
agent can write; ``image`` is a path of the image's own (root's: the managed settings),
read as it is when the hook service starts, never snapshotted. The discobot format's
source is a directory of scripts, each a hook (HOOKS_DIR); VS Code's are folders of config
files, each ``*.json`` in one a file of hooks (FOLDERS); the rest are config files.
"""

from __future__ import annotations

import os

WORKSPACE, HOME, IMAGE = "workspace", "home", "image"
CONFIG_LIMIT = 2**20  # a hook config is a few KiB; a bigger file is not read
HOOKS_DIR = (WORKSPACE, os.path.join(".discobot", "hooks"))  # (config/paths.workspace_hooks)
FOLDERS = ((WORKSPACE, ".github/hooks"), (HOME, ".copilot/hooks"))  # VS Code's *.json

# dialect name (events/model.DialectName's value) -> its sources, in the order it loads them
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
