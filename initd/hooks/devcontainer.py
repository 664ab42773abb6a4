"""The workspace's devcontainer.json, as far as initd runs it: its lifecycle commands
(https://containers.dev/implementors/json_reference/#lifecycle-scripts), ``waitFor``,
the users named and the environment given, checked into one record whose problems name
the file and the key.

The file is the agent's to write: root reads it through agentfs (no link followed, a
regular file, at most LIMIT bytes) and parses it as JSONC (jsonc.py). Nothing here runs
anything; lifecycle.py does. Parsed only on demand: a boot without a devcontainer.json
never imports this.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping
from typing import Any, NamedTuple

from initd import limits, users
from initd.agentfs import Place
from initd.errors import InitdError, shown
from initd.hooks import jsonc, workspacefiles
from initd.hooks.model import Hook
from initd.hooks.trust import Entry

# Where the specification looks, in its order (containers.dev/implementors/spec); its
# third place, .devcontainer/<folder>/devcontainer.json, needs a person to choose one.
FILES = (os.path.join(".devcontainer", "devcontainer.json"), ".devcontainer.json")
STAGES = ("onCreateCommand", "updateContentCommand", "postCreateCommand", "postStartCommand")
ONCE = frozenset(STAGES[:3])  # once per container; postStartCommand at every start
WAIT_FOR = ("initializeCommand", *STAGES)  # the schema's enum; the default:
DEFAULT_WAIT_FOR = "updateContentCommand"
NOT_RUN = {
    "initializeCommand": "not run: it runs on the host before the container is created, "
                         "which is the dev container tool's job (initd runs inside)",
    "postAttachCommand": "not run: it runs each time a tool attaches to the container, and "
                         "initd attaches nothing",
}
LIMIT = 2**20  # a devcontainer.json is a few KiB
DEFAULT_TIMEOUT = 1800.0  # seconds per command (customizations.initd.timeout)
KIND = "devcontainer"  # the type its commands have in status.json
# ${name} or ${name:args}: the reference CLI's syntax (devcontainers/cli,
# src/spec-common/variableSubstitution.ts)
VARIABLE = re.compile(r"\$\{([^}]*)\}")
SUPPORTED = frozenset({"localEnv", "env", "containerEnv", "localWorkspaceFolder",
                       "localWorkspaceFolderBasename", "containerWorkspaceFolder",
                       "containerWorkspaceFolderBasename"})
# a name in the dev container's style that is none of those: said, and left as written
# (a shell's own ${HOME} or ${X:-y} in a command is no variable of the file's)
STYLE = re.compile(r"(local|container|devcontainer)[A-Za-z]*")
ERROR, WARNING, NOTE = "error", "warning", "note"
# What initd gives the agent and the commands, which the file (the agent's to write) may
# not redirect: INITD_SOCKET, INITD_STATE_DIR... and the hooks' own variables.
OWN_PREFIX = "INITD_"
OWN_NAMES = frozenset(("DISCOBOT_SESSION_ID", "DISCOBOT_WORKSPACE", "DISCOBOT_HOOK_TYPE"))


class Problem(NamedTuple):
    path: str
    key: str | None  # the key (``remoteEnv.PATH``), or None for the whole file
    reason: str
    severity: str = ERROR

    def __str__(self) -> str:
        return f"{self.path}: {self.key}: {self.reason}" if self.key else \
            f"{self.path}: {self.reason}"


class Command(NamedTuple):
    stage: str
    name: str | None  # its key in the object form; None for a plain string or array
    form: str  # "string" (run by /bin/sh -c) or "array" (executed as is, no shell)
    args: tuple[str, ...]  # the string alone, or the array, as written

    @property
    def label(self) -> str:
        return self.stage if self.name is None else f"{self.stage}.{self.name}"

    @property
    def text(self) -> str:
        """For people: the string, or the array as a shell would read it."""
        return self.args[0] if self.form == "string" else shlex.join(self.args)

    def argv(self, resolve: Substitution) -> tuple[str, ...]:
        args = tuple(resolve.text(arg) for arg in self.args)
        return ("/bin/sh", "-c", args[0]) if self.form == "string" else args

    def hook(self, config: Config) -> Hook:
        """Its record in status.json and its log's name: ``devcontainer-oncreatecommand``,
        ``devcontainer-postcreatecommand-db`` (one plain file name, whatever the key)."""
        tail = re.sub(r"[^a-z0-9_-]", "", (self.name or "").lower().replace(".", "-"))
        ident = f"{KIND}-{self.stage.lower()}" + (f"-{tail}" if tail else "")
        if self.name is not None:  # two keys that clean to the same name stay apart
            ident += "-" + hashlib.sha256(self.name.encode()).hexdigest()[:6]
        return Hook(id=ident[:200], name=self.label, type=KIND, path=config.path,
                    directory=os.path.dirname(config.path), timeout=config.timeout,
                    limits=config.limits)


class Stage(NamedTuple):
    key: str
    commands: tuple[Command, ...]
    parallel: bool  # the object form: its commands run at once
    raw: Any  # as written (what trust hashes)


class Config(NamedTuple):
    path: str
    workspace: str
    stages: tuple[Stage, ...] = ()  # those the file has, in the specification's order
    wait_for: str = DEFAULT_WAIT_FOR
    remote_user: str | None = None
    container_user: str | None = None
    container_env: tuple[tuple[str, str], ...] = ()
    remote_env: tuple[tuple[str, str | None], ...] = ()  # None: unset
    timeout: float = DEFAULT_TIMEOUT
    limits: limits.Limits = limits.NONE
    problems: tuple[Problem, ...] = ()
    ignored: tuple[str, ...] = ()  # lifecycle keys the file has that initd does not run

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == ERROR)

    def waited(self, stage: str) -> bool:
        """Does the agent start only after this stage?"""
        return STAGES.index(stage) <= STAGES.index(self.wait_for) \
            if self.wait_for in STAGES else False


def find(workspace: str) -> str | None:
    """The workspace's devcontainer.json (the first of FILES there is), or None."""
    for name in FILES:
        path = os.path.join(workspace, name)
        if os.path.lexists(path):
            return path
    return None


def load(workspace: str) -> Config | None:
    """The workspace's devcontainer.json, checked; None when it has none. A file that
    cannot be read or parsed is a Config with that one error (and nothing to run)."""
    path = find(workspace)
    if path is None:
        return None
    notes = tuple(Problem(os.path.join(workspace, other), None, f"ignored: {path} comes "
                          "first", NOTE) for other in FILES[1:]
                  if path != os.path.join(workspace, other)
                  and os.path.lexists(os.path.join(workspace, other)))
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
    timeout, lim = _customizations(data.get("customizations"), problem)
    config = config._replace(
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
        elif name.startswith(OWN_PREFIX) or name in OWN_NAMES:
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
    timeout = mine.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or \
            not 0 < timeout < 10**9:
        problem("customizations.initd.timeout", f"expected a number of seconds > 0, got "
                f"{shown(timeout, 40)}")
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


def unknown_variables(text: str) -> list[str]:
    """The ``${…}`` in ``text`` that look like the dev container's and are not known."""
    found = []
    for match in VARIABLE.finditer(text):
        name, _, rest = match[1].partition(":")
        if name in SUPPORTED:
            if name.endswith("Env") and not rest:  # ${localEnv}: which variable?
                found.append(match[1])
        elif STYLE.fullmatch(name):
            found.append(match[1])
    return found


def _kind(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "true or false",
            type(None): "null"}.get(type(value), "a number")


class Substitution:
    """``${…}`` in the file's texts, as the reference CLI resolves them, inside the
    container: ``localEnv`` (and ``env``) is initd's own environment (there is no other
    host to ask), ``containerEnv`` that plus the file's containerEnv, both without the
    secrets; ``${localEnv:NAME:default}``; both workspace folders are the workspace.
    Anything else is left as written (said once, when the file is checked)."""

    def __init__(self, base: Mapping[str, str], workspace: str,
                 container: Mapping[str, str] | None = None) -> None:
        self.base = base
        self.container = base if container is None else container
        self.workspace = workspace

    def text(self, text: str) -> str:
        return VARIABLE.sub(self._one, text)

    def _one(self, match: re.Match[str]) -> str:
        name, *args = match[1].split(":")
        if name in ("localEnv", "env", "containerEnv") and args and args[0]:
            env = self.base if name != "containerEnv" else self.container
            value = env.get(args[0])
            return value if value is not None else (args[1] if len(args) > 1 else "")
        if name in ("localWorkspaceFolder", "containerWorkspaceFolder"):
            return self.workspace
        if name in ("localWorkspaceFolderBasename", "containerWorkspaceFolderBasename"):
            return os.path.basename(self.workspace.rstrip("/"))
        return match[0]


def environment(config: Config, base: Mapping[str, str]
                ) -> tuple[dict[str, str], dict[str, str | None]]:
    """(the container's environment as the commands see it, the changes the file makes:
    containerEnv then remoteEnv, None for a variable remoteEnv unsets). ``base``: initd's
    environment without the secrets."""
    first = Substitution(base, config.workspace)
    changes: dict[str, str | None] = {k: first.text(v) for k, v in config.container_env}
    container = {**base, **{k: v for k, v in changes.items() if v is not None}}
    second = Substitution(base, config.workspace, container)
    for name, value in config.remote_env:
        changes[name] = None if value is None else second.text(value)
    return container, changes


def apply(env: Mapping[str, str], changes: Mapping[str, str | None]) -> dict[str, str]:
    out = dict(env)
    for name, value in changes.items():
        if value is None:
            out.pop(name, None)
        else:
            out[name] = value
    return out


class Runner(NamedTuple):
    """Who the commands run as, and the one line that says why not the user named."""

    account: users.Account | None  # None: nobody can run them (an unknown user)
    named: str | None  # the user the file names, and under which key
    key: str | None
    warning: str | None


def runner_for(config: Config, agent: users.Account) -> Runner:
    """remoteUser, else containerUser, else the agent. The file is the agent's to write,
    so when the agent is not root it names nobody else (invariant 8: root never runs
    what the agent can write as root or as another user): the commands run as the
    agent, and a warning says so. An agent that is root may name anyone: that is a
    privilege drop. A user passwd does not know is an error: nothing runs."""
    key, named = (("remoteUser", config.remote_user) if config.remote_user else
                  ("containerUser", config.container_user) if config.container_user else
                  (None, None))
    if named is None:
        return Runner(agent, None, None, None)
    try:
        account: users.Account | None = users.lookup(named)
    except InitdError:
        account = None
    if agent.uid != 0:
        if (account is not None and account.uid == agent.uid) or named == agent.name:
            return Runner(agent, named, key, None)
        return Runner(agent, named, key, (
            f"{config.path}: {key} {shown(named)}: the commands run as the agent user "
            f"{shown(agent.name)} instead: the agent can write this file, and initd never "
            "runs what it says as anyone but the agent"))
    if account is None:
        return Runner(None, named, key, f"{config.path}: {key} {shown(named)}: no such "
                      "user in the passwd database: the lifecycle commands do not run")
    return Runner(account, named, key, None)


def trust_entries(config: Config) -> list[Entry]:
    """What ``initd hooks trust`` approves: each stage (its commands, with the users and
    the environment they run with), and the environment the agent gets from the file."""
    common = [config.remote_user, config.container_user, list(config.container_env),
              list(config.remote_env), config.timeout, list(config.limits)]
    entries = []
    for stage in config.stages:
        what = json.dumps([config.path, stage.key, stage.raw, *common], sort_keys=True)
        entries.append(Entry(f"{config.path}#{stage.key}",
                             hashlib.sha256(what.encode()).hexdigest(),
                             f"devcontainer {stage.key} ({config.path})"))
    if config.container_env or config.remote_env:
        what = json.dumps([config.path, "environment", list(config.container_env),
                           list(config.remote_env)], sort_keys=True)
        entries.append(Entry(f"{config.path}#environment",
                             hashlib.sha256(what.encode()).hexdigest(),
                             f"devcontainer containerEnv and remoteEnv ({config.path})"))
    return entries
