"""The workspace's devcontainer.json, as far as initd runs it: its lifecycle commands
(https://containers.dev/implementors/json_reference/#lifecycle-scripts), ``waitFor``,
the users named and the environment given, checked into one record (model.py) whose
problems name the file and the key.

The file is the agent's to write: root reads it through agentfs (no link followed, a
regular file, at most LIMIT bytes) and parses it as JSONC (config/jsonc.py). Nothing here runs
anything; lifecycle.py does. Where the file is: file.py; its environment: env.py.
Parsed only on demand: a boot without a devcontainer.json never imports this.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from initd.config import jsonc
from initd.config.fields import Fields
from initd.config.problems import ERROR, NOTE, WARNING, LoadError, Problem
from initd.devcontainer import file
from initd.devcontainer.env import SUPPORTED, Substitution, apply, own, resolve, unknown_variables
from initd.devcontainer.model import (
    ATTACH,
    DEFAULT_PROBE,
    DEFAULT_TIMEOUT,
    DEFAULT_WAIT_FOR,
    KIND,
    ONCE,
    PROBES,
    STAGES,
    WAIT_FOR,
    Command,
    Config,
    Stage,
)
from initd.devcontainer.users import Runner, runner_for, trust_entries
from initd.errors import shown
from initd.hooks import workspacefiles
from initd.process import limits
from initd.state.agentfs import Place

# (what callers have always found here: the record, its users, its environment)
__all__ = ["ATTACH", "ERROR", "KIND", "NOTE", "ONCE", "STAGES", "WARNING", "Command", "Config",
           "Problem", "Runner", "Stage", "Substitution", "apply", "environment", "find",
           "load", "parse", "runner_for", "trust_entries"]
NOT_RUN = {
    "initializeCommand": "not run: it runs on the host before the container is created, "
                         "which is the dev container tool's job (initd runs inside)",
}
LIMIT = 2**20  # a devcontainer.json is a few KiB


def find(workspace: str) -> str | None:
    """The workspace's devcontainer.json that runs (file.py: the specification's
    places, in order); with several sub-folder files and none chosen, their folder
    (``load`` says why none runs); None when there is none."""
    found = file.find(workspace)
    if found is None:
        return None
    return found.path or os.path.join(workspace, file.FOLDER)


def load(workspace: str) -> Config | None:
    """The workspace's devcontainer.json, checked; None when it has none. A file that
    cannot be read or parsed is a Config with that one error (and nothing to run);
    several sub-folder files and none chosen, a Config that does not run, saying why."""
    found = file.find(workspace)
    if found is None:
        return None
    if found.path is None:
        folder = os.path.join(workspace, file.FOLDER)
        return Config(folder, workspace, runs=False,
                      problems=(Problem(folder, None, found.why_none(), WARNING),))
    path = found.path
    notes = tuple(Problem(other, None, f"ignored: {path} comes first", NOTE)
                  for other in found.others)
    try:
        data = jsonc.loads(_read(workspace, path).decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError) as err:
        return Config(path, workspace, problems=(Problem(path, None, f"cannot read: "
                                                         f"{err}"), *notes))
    except ValueError as err:  # JSONCError, json.JSONDecodeError
        return Config(path, workspace, problems=(Problem(path, None, f"not valid JSON "
                                                         f"with comments: {err}"), *notes))
    config = parse(data, path, workspace)
    return config._replace(problems=(*config.problems, *notes))


def _read(workspace: str, path: str) -> bytes:
    """The file's bytes, never through a link (Unsafe: a link, a FIFO, over LIMIT)."""
    if workspacefiles.guarded(path):  # a person's verb, as root: the owner's files only
        return workspacefiles.read(path, LIMIT, whole=True)[0]
    parts = os.path.relpath(path, workspace).split(os.sep)
    with Place(workspace, tuple(parts[:-1])).open() as directory:
        data = directory.read(parts[-1], LIMIT, anyone=True)
    if data is None:
        raise FileNotFoundError(f"{path}: gone")
    return data


def parse(data: object, path: str, workspace: str) -> Config:
    """The lifecycle keys of a parsed devcontainer.json, checked. Every other key (image,
    features, mounts, …) is for the tool that creates the container: not read."""
    config = Config(path, workspace)
    if not isinstance(data, dict):
        return config._replace(problems=(Problem(path, None, "expected an object at the "
                                                 f"top, got {_kind(data)}"),))
    problems: list[Problem] = []

    def problem(key: str, reason: str, severity: str = ERROR) -> None:
        problems.append(Problem(path, key, reason, severity))

    stages = []
    for key in STAGES:
        stage = _stage(key, data.get(key), problem)
        if stage is not None:
            stages.append(stage)
    wait_for = data.get("waitFor", DEFAULT_WAIT_FOR)
    if wait_for not in WAIT_FOR:
        problem("waitFor", f"expected one of {', '.join(WAIT_FOR)}, got {shown(wait_for)}")
        wait_for = DEFAULT_WAIT_FOR
    probe = data.get("userEnvProbe", DEFAULT_PROBE)
    if probe not in PROBES:
        problem("userEnvProbe", f"expected one of {', '.join(PROBES)}, got {shown(probe)}")
        probe = DEFAULT_PROBE
    timeout, lim = _customizations(data.get("customizations"), problem)
    config = config._replace(user_env_probe=probe,
        stages=tuple(stages), wait_for=wait_for,
        remote_user=_user(data, "remoteUser", problem),
        container_user=_user(data, "containerUser", problem),
        container_env=tuple(_env(data, "containerEnv", False, problem)),  # type: ignore[arg-type]
        remote_env=tuple(_env(data, "remoteEnv", True, problem)), timeout=timeout, limits=lim,
        ignored=tuple(key for key in NOT_RUN if data.get(key) not in (None, "", [], {})))
    for key in config.ignored:
        problem(key, NOT_RUN[key], NOTE)
    for key, text in _texts(config):
        for name in unknown_variables(text):
            problem(key, f"${{{name}}}: not a variable initd knows (known: "
                    f"{', '.join(sorted(SUPPORTED))}): left as written", WARNING)
    return config._replace(problems=tuple(problems))


def _stage(key: str, value: object, problem: Any) -> Stage | None:
    if value is None or value in ("", [], {}):
        return None  # not set (an empty command runs nothing, as the reference CLI does)
    if isinstance(value, dict):
        commands = []
        for name, item in value.items():
            one = _command(key, str(name), item, problem)
            if one is not None:
                commands.append(one)
        return Stage(key, tuple(commands), True, value) if commands else None
    one = _command(key, None, value, problem)
    return None if one is None else Stage(key, (one,), False, value)


def _command(stage: str, name: str | None, value: object, problem: Any) -> Command | None:
    where = stage if name is None else f"{stage}.{name}"
    if isinstance(value, str):
        if "\0" in value:
            problem(where, "a NUL character cannot be in a command")
            return None
        return Command(stage, name, "string", (value,)) if value.strip() else None
    if isinstance(value, list) and all(isinstance(a, str) and "\0" not in a for a in value):
        return Command(stage, name, "array", tuple(value)) if value else None
    forms = "a string (run by /bin/sh -c) or an array of strings (run without a shell)"
    if name is None:
        forms += ", or an object of named commands (run in parallel)"
    problem(where, f"expected {forms}, got {_kind(value)} {shown(value, 60)}")
    return None


def _user(data: dict[str, Any], key: str, problem: Any) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        problem(key, f"expected a user name, got {shown(value)}")
        return None
    return value


def _env(data: dict[str, Any], key: str, nulls: bool, problem: Any
         ) -> list[tuple[str, str | None]]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, dict):
        problem(key, f"expected an object of variables, got {_kind(value)}")
        return []
    pairs: list[tuple[str, str | None]] = []
    for name, item in value.items():
        if not name or "=" in name or "\0" in name:
            problem(f"{key}.{name}", "not a variable name")
        elif own(name):
            problem(f"{key}.{name}", "initd's own variable: left as initd sets it (it tells "
                    "the agent and the hooks where initd and their state are)", WARNING)
        elif (isinstance(item, str) and "\0" not in item) or (item is None and nulls):
            pairs.append((name, item))
        else:
            allowed = "text, or null to unset it" if nulls else "text"
            problem(f"{key}.{name}", f"expected {allowed}, got {_kind(item)} "
                    f"{shown(item, 40)}")
    return pairs


def _customizations(value: object, problem: Any) -> tuple[float, limits.Limits]:
    """``customizations.initd`` (the specification's place for one tool's own keys):
    ``timeout`` (seconds per command) and ``limits`` (as a hook's ``limits:``)."""
    mine = value.get("initd") if isinstance(value, dict) else None
    if mine is None:
        return DEFAULT_TIMEOUT, limits.NONE
    if not isinstance(mine, dict):
        problem("customizations.initd", f"expected an object, got {_kind(mine)}")
        return DEFAULT_TIMEOUT, limits.NONE
    for key in mine:
        if key not in ("timeout", "limits"):
            problem(f"customizations.initd.{key}", "unknown key ignored (known: timeout, "
                    "limits)", WARNING)
    try:
        timeout = Fields(mine, "", "customizations.initd", nulls=False).number(
            "timeout", DEFAULT_TIMEOUT, unit="seconds", below=10**9, width=40)
    except LoadError as err:
        problem(err.problem.key, err.problem.reason)
        timeout = DEFAULT_TIMEOUT
    try:
        lim = limits.parse(mine.get("limits"))
    except limits.LimitError as err:
        problem("customizations.initd.limits", str(err).removeprefix("limits: "))
        lim = limits.NONE
    return float(timeout), lim


def _texts(config: Config) -> list[tuple[str, str]]:
    """Every text where variables are substituted, with its key."""
    found = [(c.label, arg) for s in config.stages for c in s.commands for arg in c.args]
    found += [(f"containerEnv.{k}", v) for k, v in config.container_env]
    found += [(f"remoteEnv.{k}", v) for k, v in config.remote_env if v is not None]
    return found


def _kind(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "true or false",
            type(None): "null"}.get(type(value), "a number")


def environment(config: Config, base: Mapping[str, str]
                ) -> tuple[dict[str, str], dict[str, str | None]]:
    """(the container's environment as the commands see it, the changes the file makes:
    containerEnv then remoteEnv, None for a variable remoteEnv unsets). ``base``: initd's
    environment without the secrets."""
    container, remote = resolve(config.container_env, config.remote_env, config.workspace,
                                base)
    return {**base, **container}, {**container, **remote}
