"""Settings: flags > environment > /etc/initd/initd.yaml > defaults, into one frozen record.

Read in the supervisor and the CLI processes, never in PID 1 (which glances only at its
own verbosity: cli.pid1_log); pyyaml and python-dotenv are imported only when a file
needs them.
Every error names where the bad value came from (flag, variable or file) and what was
expected.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

from initd.config.paths import (
    DEFAULT_CONFIG,
    DEFAULT_HOOKS_DIR,
    DEFAULT_SOCKET,
    DEFAULT_TRUST_FILE,
    default_socket,
)
from initd.config.values import (
    Restart,
    boolean,
    count,
    hook_limits,
    log_format,
    names,
    optional_text,
    path,
    paths,
    port,
    remaps,
    restart,
    seconds,
    session_ident,
    stop_signal,
    url,
)
from initd.errors import InitdError, shown
from initd.process.limits import NONE as NO_LIMITS
from initd.process.limits import Limits

SOCKET_HELP = (f"default {DEFAULT_SOCKET} as root, else $XDG_RUNTIME_DIR/initd.sock or "
               "/tmp/initd-UID/initd.sock")
ALWAYS_SECRET = ("DISCOBOT_SECRET",)  # removed from every hook's environment, whatever else

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping, MutableMapping, Sequence
    from typing import Any

    from initd.config.services import Service


class Option(NamedTuple):
    """One setting: where it can come from and how its text becomes a value."""

    name: str  # the argparse dest and the config-file key
    parse: Callable[[Any], Any]
    default: Any
    env: tuple[str, ...]  # INITD_* first, then discobot's aliases


OPTIONS = (
    Option("workspace", path, None, ("INITD_WORKSPACE", "WORKSPACE_PATH")),
    Option("user", optional_text, None, ("INITD_USER", "AGENT_USER")),
    Option("grace", seconds, 8.0, ("INITD_GRACE",)),
    Option("stop_signal", stop_signal, 15, ("INITD_STOP_SIGNAL",)),  # SIGTERM
    Option("remap_exit", remaps, (), ("INITD_REMAP_EXIT",)),
    Option("restart", restart, Restart.NEVER, ("INITD_RESTART",)),
    Option("max_restarts", count, 5, ("INITD_MAX_RESTARTS",)),
    Option("restart_window", seconds, 60.0, ("INITD_RESTART_WINDOW",)),
    Option("env_file", paths, (), ("INITD_ENV_FILE",)),
    Option("verbose", count, 0, ("INITD_VERBOSE",)),
    Option("log_format", log_format, "auto", ("INITD_LOG_FORMAT",)),
    Option("session_id", session_ident, None, ("INITD_SESSION_ID", "SESSION_ID")),
    Option("hooks_dir", path, DEFAULT_HOOKS_DIR, ("INITD_HOOKS_DIR",)),
    Option("secret", names, ALWAYS_SECRET, ("INITD_SECRETS",)),
    Option("precommit", boolean, True, ("INITD_PRECOMMIT",)),
    Option("devcontainer", boolean, True, ("INITD_DEVCONTAINER",)),
    Option("state_dir", path, None, ("INITD_STATE_DIR",)),  # None: the agent's ~/.discobot
    Option("socket", path, None, ("INITD_SOCKET",)),  # None: default_socket()
    Option("service", boolean, None, ("INITD_SERVICE",)),  # None: when there is a workspace
    Option("ready_port", port, None, ("INITD_READY_PORT",)),
    Option("health_port", port, None, ("INITD_HEALTH_PORT",)),
    Option("ready_url", url, None, ("INITD_READY_URL",)),
    Option("max_reprompts", count, 3, ("INITD_MAX_REPROMPTS",)),
    Option("trust", boolean, False, ("INITD_TRUST",)),
    Option("trust_file", path, DEFAULT_TRUST_FILE, ("INITD_TRUST_FILE",)),
    Option("hook_limits", hook_limits, NO_LIMITS, ("INITD_HOOK_LIMITS",)),
    Option("services_log_dir", path, None, ("INITD_SERVICES_LOG_DIR",)),  # None: see there
)


class Settings(NamedTuple):
    """Every option's value, frozen: a NamedTuple, as pre-commit's are (dataclasses would
    import inspect into every start)."""

    command: tuple[str, ...]
    workspace: str
    workspace_given: bool  # set by flag, environment or config (not just the cwd)
    user: str | None
    grace: float
    stop_signal: int  # arms grace -> KILL; every other signal is only passed on
    remap_exit: tuple[tuple[int, int], ...]
    restart: Restart
    max_restarts: int
    restart_window: float
    env_file: tuple[str, ...]
    verbose: int
    log_format: str
    session_id: str | None
    hooks_dir: str
    secret: tuple[str, ...]  # variables removed from every hook's environment
    precommit: bool  # install the managed pre-commit chain at boot
    devcontainer: bool  # run the workspace's devcontainer.json lifecycle commands at boot
    state_dir: str | None  # hook status, logs, session records; None: ~/.discobot
    socket: str  # where the hook service's control API listens
    service: bool | None  # run the hook service: yes, no, or None: when there's a workspace
    ready_port: int | None  # the agent is ready when this port on loopback answers
    health_port: int | None  # /healthz and /readyz over HTTP, from the supervisor
    ready_url: str | None  # ... or when this URL answers 200-399
    max_reprompts: int  # hook-triggered re-prompts per user message (discobot's hooks spec's 3)
    trust: bool  # run a workspace hook only if its content was approved (initd hooks trust)
    trust_file: str  # where approvals are kept
    hook_limits: Limits  # every hook's, unless its own front matter says otherwise
    services_log_dir: str | None  # the services' logs (supervisor/services.py: None)
    config: str | None
    warnings: tuple[str, ...] = ()
    services: tuple[Service, ...] = ()  # the image's (config/services.py): only from its file

    def remapped(self, code: int) -> int:
        return dict(self.remap_exit).get(code, code)


def load(flags: argparse.Namespace, environ: MutableMapping[str, str]) -> Settings:
    """Resolve every option. Env files are loaded into ``environ`` first (never overriding
    a variable already set), so they can carry INITD_* settings as well as the agent's."""
    config_path, explicit = _config_path(flags, environ)
    config, warnings = _read_config(config_path, explicit)
    env_file_option = next(opt for opt in OPTIONS if opt.name == "env_file")
    load_env_files(_resolve(env_file_option, flags, environ, config, config_path), environ)
    values = {opt.name: _resolve(opt, flags, environ, config, config_path) for opt in OPTIONS}
    # Naming a secret adds to the default, never un-hides it: discobot's own secret is
    # the one its hooks leaked (discobot.md §1).
    values["secret"] = tuple(dict.fromkeys((*ALWAYS_SECRET, *values["secret"])))
    declared: tuple[Service, ...] = ()
    if config.get("services") is not None:  # (its parser only when there are some)
        from initd.config import services

        declared = services.load(config["services"], config_path)
    return Settings(
        command=tuple(getattr(flags, "command", ())),  # the main command's CMD; a verb has none
        workspace_given=values["workspace"] is not None,
        workspace=values.pop("workspace") or os.getcwd(),
        socket=values.pop("socket") or default_socket(environ),
        config=config_path if config else None,
        warnings=tuple(warnings),
        services=declared,
        **values,
    )


def load_env_files(files: Sequence[str], environ: MutableMapping[str, str]) -> None:
    """python-dotenv, never overriding what the real environment already says."""
    if not files:
        return
    from dotenv import dotenv_values

    for env_file in files:
        if not os.path.isfile(env_file):
            raise InitdError(f"env file {env_file}: not found (check --env-file/INITD_ENV_FILE)")
        for key, value in dotenv_values(env_file).items():
            if value is not None and key not in environ:
                environ[key] = value


def _resolve(opt: Option, flags: argparse.Namespace, environ: Mapping[str, str],
             config: Mapping[str, Any], config_path: str) -> Any:
    given = getattr(flags, opt.name, None)
    if isinstance(given, str):  # a verb's parser may take it as plain text: check it here
        flag = "--" + opt.name.replace("_", "-")
        return _parse(opt, given, f"{flag} {shown(given)}")
    if given is not None:
        return given  # argparse already parsed and checked it with the same parser
    for var in opt.env:
        if environ.get(var, "") != "":
            return _parse(opt, environ[var], f"environment variable {var}={shown(environ[var])}")
    if opt.name in config:
        return _parse(opt, config[opt.name], f"{config_path}: key {opt.name!r}")
    return opt.default


def _parse(opt: Option, raw: object, where: str) -> Any:
    try:
        return opt.parse(raw)
    except ValueError as err:
        raise InitdError(f"{where}: {err}") from None


def _config_path(flags: argparse.Namespace, environ: Mapping[str, str]) -> tuple[str, bool]:
    if getattr(flags, "config", None):
        return os.path.abspath(str(flags.config)), True
    if environ.get("INITD_CONFIG"):
        return os.path.abspath(environ["INITD_CONFIG"]), True
    return DEFAULT_CONFIG, False


def _read_config(config_path: str, explicit: bool) -> tuple[dict[str, Any], list[str]]:
    try:
        with open(config_path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        if explicit:
            raise InitdError(f"config file {config_path}: not found") from None
        return {}, []
    except PermissionError:  # the image's file, root's alone (its services' secrets): a
        if explicit:  # verb the agent runs takes its settings from its environment
            raise InitdError(f"config file {config_path}: cannot read: permission "
                             "denied") from None
        return {}, [f"config file {config_path}: not readable by uid {os.geteuid()}: "
                    "its settings are not used here"]
    except (OSError, UnicodeDecodeError) as err:
        raise InitdError(f"config file {config_path}: cannot read: {err}") from None
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:  # file:line:col: problem, as a compiler says it
        mark = getattr(err, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or "not valid YAML"
        raise InitdError(f"{config_path}{where}: invalid YAML: {problem}") from None
    if data is None:
        return {}, []
    if not isinstance(data, dict):
        raise InitdError(f"config file {config_path}: expected a mapping of settings at the top")
    config = {str(k).replace("-", "_"): v for k, v in data.items()}
    known = {opt.name for opt in OPTIONS} | {"services"}
    warnings = [f"config file {config_path}: unknown key {k!r} ignored"
                for k in sorted(config) if k not in known]
    return {k: v for k, v in config.items() if k in known}, warnings
