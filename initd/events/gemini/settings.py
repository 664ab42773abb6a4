"""Gemini CLI's settings files and which of their hooks run.

The files (https://geminicli.com/docs/reference/configuration, "Settings files"), in the
order Gemini merges them: the system defaults, the user's, the project's, the system
settings. The two system files are the image's (root's); Gemini lets
``GEMINI_CLI_SYSTEM_SETTINGS_PATH`` name the system settings elsewhere (the defaults are
then beside it) and ``GEMINI_CLI_SYSTEM_DEFAULTS_PATH`` the defaults. initd honours them
from its own environment only (the supervisor keeps devcontainer.json's containerEnv
from setting them: supervisor/children.py), and only for a file root alone can have put
there: the file and every directory on its way root's, none that another user can write
(a sticky one aside), no link that is not root's. Anything else is said, and the image's
own path is read in its place: a guard of the image's is never swapped for a file the
agent can write, and a person's verb run as root never follows the agent's link.

``hooksConfig`` (``enabled``, ``disabled``): see dialects/gemini.py."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from typing import Any

from initd.config.problems import WARNING, Problem
from initd.errors import shown
from initd.events import sources
from initd.events.loading import Collected

NAME = "gemini"
LEVELS = ("defaults", "user", "project", "system")  # sources.py's rows, in this order
DEFAULTS_VARIABLE, SETTINGS_VARIABLE = sources.IMAGE_VARIABLES
IMAGE = ("defaults", "system")
Settings = list[tuple[str, str, dict[str, Any]]]  # (path, level, its data), in load order


def files(workspace: str, home: str, env: Mapping[str, str] = os.environ
          ) -> tuple[list[tuple[str, str]], list[Problem]]:
    """(path, level) of each settings file, in load order, and what was wrong with the
    variables that may name the system files."""
    rows = [path for path, _ in sources.paths(NAME, workspace, home)]
    problems: list[Problem] = []
    system = _named(env, SETTINGS_VARIABLE, rows[3], problems)
    beside = rows[0] if system == rows[3] else \
        os.path.join(os.path.dirname(system), "system-defaults.json")
    defaults = _named(env, DEFAULTS_VARIABLE, beside, problems)
    if defaults == beside != rows[0] and root_only(beside) is not None:
        problems.append(Problem("", SETTINGS_VARIABLE, f"{beside}: not read: "
                                f"{root_only(beside)}; {rows[0]} is read", WARNING))
        defaults = rows[0]
    return list(zip((defaults, rows[1], rows[2], system), LEVELS, strict=True)), problems


def _named(env: Mapping[str, str], variable: str, default: str,
           problems: list[Problem]) -> str:
    said = env.get(variable)
    if not said:
        return default
    why = "not an absolute path" if not os.path.isabs(said) else root_only(said)
    if why is None:
        return os.path.normpath(said)
    problems.append(Problem("", variable, f"{shown(said, 200)}: not read: {why}; {default} "
                            "is read in its place", WARNING))
    return default


def root_only(path: str) -> str | None:
    """Why another user than root could have put (or change) the file at ``path``, or
    None: every name on its way, as written and as resolved, is root's, and no directory
    there is writable by another (but a sticky one, whose entries are their owners')."""
    for each in (os.path.normpath(path), os.path.realpath(path)):
        parts = each.split(os.sep)
        for at in range(1, len(parts) + 1):
            step = os.sep.join(parts[:at]) or os.sep
            try:
                info = os.lstat(step)
            except FileNotFoundError:
                break  # (the rest cannot be made there but by root)
            except OSError as err:
                return f"{step}: {err.strerror}"
            why = _owned(step, info, at == len(parts))
            if why is not None:
                return why
    return None


def _owned(step: str, info: os.stat_result, last: bool) -> str | None:
    others = stat.S_IWOTH | (stat.S_IWGRP if info.st_gid != 0 else 0)
    if info.st_uid != 0:
        return f"{step} is not root's"
    if stat.S_ISLNK(info.st_mode):
        return None  # (root's link: where it leads is checked resolved)
    if stat.S_ISDIR(info.st_mode):
        return None if not info.st_mode & others or info.st_mode & stat.S_ISVTX else \
            f"{step} can be written by others than root"
    if not last or not stat.S_ISREG(info.st_mode):
        return f"{step} is not a regular file"
    return f"{step} can be written by others than root" if info.st_mode & others else None


def switches(found: Collected, settings: Settings) -> tuple[dict[str, bool],
                                                            dict[str, set[str]]]:
    """Whether each level's hooks run (``hooksConfig.enabled``), and the names (or
    commands) of its hooks that do not (``hooksConfig.disabled``). Gemini takes
    ``enabled`` from the last file that says it (system > project > user > defaults) and
    the union of every ``disabled``; here a file the agent writes decides nothing about
    the hooks of the files above it: the image's decide for every level (the system
    file's ``enabled`` over all), the user's for the user's and the project's, the
    project's for its own."""
    enabled: dict[str, bool] = {}
    disabled: dict[str, set[str]] = {level: set() for level in LEVELS}
    for path, level, data in settings:
        config = data.get("hooksConfig")
        if config is None:
            continue
        if not isinstance(config, Mapping):
            found.problems.append(Problem(path, "hooksConfig", "expected a mapping: "
                                          "ignored", WARNING))
            continue
        value, names = config.get("enabled"), config.get("disabled")
        if isinstance(value, bool):
            enabled[level] = value
        elif value is not None:
            found.problems.append(Problem(path, "hooksConfig.enabled", "expected true or "
                                          f"false, got {shown(value, 40)}: ignored", WARNING))
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            disabled[level].update(names)
        elif names is not None:
            found.problems.append(Problem(path, "hooksConfig.disabled", "expected a list "
                                          "of hook names: ignored", WARNING))
    return _on(enabled), _off(disabled)


def _on(enabled: dict[str, bool]) -> dict[str, bool]:
    if "system" in enabled:
        return dict.fromkeys(LEVELS, enabled["system"])

    def first(*levels: str) -> bool:
        return next((enabled[level] for level in levels if level in enabled), True)
    return {"defaults": first("defaults"), "system": first("defaults"),
            "user": first("user", "defaults"),
            "project": first("project", "user", "defaults")}


def _off(disabled: dict[str, set[str]]) -> dict[str, set[str]]:
    image = disabled["defaults"] | disabled["system"]
    return {"defaults": image, "system": image, "user": image | disabled["user"],
            "project": image | disabled["user"] | disabled["project"]}
