"""Settings: flags > environment > /etc/initd/initd.yaml > defaults, into one frozen record.

Read in the supervisor and the CLI processes, never in PID 1 (which glances only at its
own verbosity: cli.pid1_log); pyyaml and python-dotenv are imported only when a file
needs them.
Every error names where the bad value came from (flag, variable or file) and what was
expected.
"""

from __future__ import annotations

import argparse
import enum
import os
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any, NamedTuple

from initd.errors import InitdError, shown
from initd.paths import (
    DEFAULT_CONFIG,
    DEFAULT_HOOKS_DIR,
    DEFAULT_SOCKET,
    DEFAULT_TRUST_FILE,
    default_socket,
)

SOCKET_HELP = (f"default {DEFAULT_SOCKET} as root, else $XDG_RUNTIME_DIR/initd.sock or "
               "/tmp/initd-UID/initd.sock")
ALWAYS_SECRET = ("DISCOBOT_SECRET",)  # removed from every hook's environment, whatever else


class Restart(enum.StrEnum):
    NEVER = "never"  # tini-compatible: the agent's exit is the container's exit
    ON_FAILURE = "on-failure"  # restart after a non-zero exit or a death by signal
    ALWAYS = "always"


# --- value parsers: text (or a YAML scalar) -> typed value; ValueError says what was expected


def seconds(value: object) -> float:
    try:
        number = float(str(value))
    except ValueError:
        raise ValueError("expected a number of seconds, e.g. 8 or 0.5") from None
    if not number >= 0:  # also rejects NaN
        raise ValueError("expected a number of seconds >= 0")
    return number


def stop_signal(value: object) -> int:
    """TERM, SIGTERM or 15: a signal PID 1 forwards (so not KILL, STOP, CHLD or a fault)."""
    import signal

    from initd.pid1 import FORWARDED

    text = str(value).strip().upper()
    name = text if text.startswith("SIG") else f"SIG{text}"
    try:
        number = int(text) if text.isdigit() else int(signal.Signals[name])
    except KeyError:
        number = 0
    if number not in FORWARDED:
        raise ValueError("expected a signal initd forwards, by name or number, e.g. TERM, "
                         "INT or 15 (not KILL, STOP or CHLD)")
    return number


def count(value: object) -> int:
    text = str(value)
    if not text.isdigit():
        raise ValueError("expected a whole number >= 0")
    return int(text)


def remap(value: object) -> tuple[int, int]:
    parts = str(value).split(":")
    if len(parts) != 2 or not all(p.isdigit() and int(p) <= 255 for p in parts):
        raise ValueError("expected FROM:TO with exit codes 0-255, e.g. 143:0")
    return int(parts[0]), int(parts[1])


def remaps(value: object) -> tuple[tuple[int, int], ...]:
    """``143:0,1:0`` or ``143:0 1:0`` (environment), a list or a mapping (YAML)."""
    if isinstance(value, Mapping):
        items: Sequence[object] = [f"{k}:{v}" for k, v in value.items()]
    elif isinstance(value, list | tuple):
        items = value
    else:
        items = str(value).replace(",", " ").split()
    return tuple(remap(item) for item in items)


def restart(value: object) -> Restart:
    try:
        return Restart(str(value))
    except ValueError:
        raise ValueError("expected one of never, on-failure, always") from None


def log_format(value: object) -> str:
    text = str(value)
    if text not in ("json", "console", "auto"):
        raise ValueError("expected json, console or auto")
    return text


def paths(value: object) -> tuple[str, ...]:
    """A list (YAML), or ``a:b`` separated like PATH (environment)."""
    items = value if isinstance(value, list | tuple) else str(value).split(os.pathsep)
    return tuple(str(item) for item in items if str(item))


def names(value: object) -> tuple[str, ...]:
    """Variable names: a list (YAML), or comma/space separated (environment)."""
    items = value if isinstance(value, list | tuple) else str(value).replace(",", " ").split()
    return tuple(str(item) for item in items)


def port(value: object) -> int:
    text = str(value)
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError("expected a TCP port number from 1 to 65535")
    return int(text)


def url(value: object) -> str:
    """An http(s) URL with a host."""
    import urllib.parse  # only when a URL is really given

    text = str(value)
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("expected an http:// or https:// URL, e.g. http://127.0.0.1:8080/health")
    try:
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise ValueError("expected a port number from 1 to 65535 in the URL") from None
    return text


def path(value: object) -> str:
    """A path, made absolute once, here: the hook service runs from / (an isolated start,
    invariant 8), so a relative path would name another place there. Kept as text:
    pathlib would be one more import on every boot."""
    text = str(value)
    if not text:
        raise ValueError("expected a path")
    return os.path.abspath(text)


def session_ident(value: object) -> str:
    """A session id names a directory in ~/.discobot: one plain name, never a way out."""
    text = str(value)
    if not (0 < len(text) <= 128 and text[0].isascii() and text[0].isalnum()
            and all(c.isascii() and (c.isalnum() or c in "._-") for c in text)):
        raise ValueError("expected a session id of at most 128 letters, digits, '.', '_' "
                         "or '-', starting with a letter or digit (it names a directory in "
                         "~/.discobot)")
    return text


def boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false (1/0, yes/no, on/off)")


def optional_text(value: object) -> str | None:
    return str(value) or None


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
    Option("state_dir", path, None, ("INITD_STATE_DIR",)),  # None: the agent's ~/.discobot
    Option("socket", path, None, ("INITD_SOCKET",)),  # None: default_socket()
    Option("service", boolean, None, ("INITD_SERVICE",)),  # None: when there is a workspace
    Option("ready_port", port, None, ("INITD_READY_PORT",)),
    Option("health_port", port, None, ("INITD_HEALTH_PORT",)),
    Option("ready_url", url, None, ("INITD_READY_URL",)),
    Option("max_reprompts", count, 3, ("INITD_MAX_REPROMPTS",)),
    Option("trust", boolean, False, ("INITD_TRUST",)),
    Option("trust_file", path, DEFAULT_TRUST_FILE, ("INITD_TRUST_FILE",)),
)


class Settings(NamedTuple):
    """Frozen: a NamedTuple, as pre-commit does; dataclasses (and its import of inspect)
    would add ~10 ms to every boot."""

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
    state_dir: str | None  # hook status, logs, session records; None: ~/.discobot
    socket: str  # where the hook service's control API listens
    service: bool | None  # run the hook service: yes, no, or None: when there's a workspace
    ready_port: int | None  # the agent is ready when this port on loopback answers
    health_port: int | None  # /healthz and /readyz over HTTP, from the supervisor
    ready_url: str | None  # ... or when this URL answers 200-399
    max_reprompts: int  # hook-triggered re-prompts per user message (the seed's 3)
    trust: bool  # run a workspace hook only if its content was approved (initd hooks trust)
    trust_file: str  # where approvals are kept
    config: str | None
    warnings: tuple[str, ...] = ()

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
    return Settings(
        command=tuple(getattr(flags, "command", ())),  # the main command's CMD; a verb has none
        workspace_given=values["workspace"] is not None,
        workspace=values.pop("workspace") or os.getcwd(),
        socket=values.pop("socket") or default_socket(environ),
        config=config_path if config else None,
        warnings=tuple(warnings),
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
    known = {opt.name for opt in OPTIONS}
    warnings = [f"config file {config_path}: unknown key {k!r} ignored"
                for k in sorted(config) if k not in known]
    return {k: v for k, v in config.items() if k in known}, warnings
