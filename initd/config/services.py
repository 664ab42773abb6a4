"""The image's services: initd.yaml's ``services:`` mapping, read into frozen records.

Only the image's configuration file declares a service (root reads it before anything of
the workspace runs); nothing of the workspace can add or change one (invariants 8-11):
as root, a file with services must be root's and writable by nobody else. Every error
names the file, the service and the key, as ``initd.yaml: services.web.ready: …``.

The keys follow supervisord's ``[program:x]`` and s6-rc's service definitions, in the
words of docs/services.md: command, user, environment, directory, type (longrun or
oneshot), restart and its crash-loop limit, readiness (a port, an HTTP URL, a command,
sd_notify's READY=1 or s6's notification fd), after (dependencies), stop_signal,
critical, log.
"""

from __future__ import annotations

import os
import re
import stat
from typing import TYPE_CHECKING, NamedTuple

from initd.config.values import Restart, count, port, restart, seconds, stop_signal, url
from initd.errors import InitdError, shown

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,62}")
RESERVED = ("agent", "service", "initd")  # the agent, the hook service and initd itself
KEYS = ("command", "user", "environment", "directory", "type", "restart", "max_restarts",
        "restart_window", "ready", "ready_timeout", "after", "stop_signal", "critical", "log")
READY_KINDS = ("port", "http", "exec", "notify", "notify_fd")
LOG_KEYS = ("max_bytes", "backups")
MAX_SERVICES = 64
MAX_LOG_BYTES = 1 << 30


class Service(NamedTuple):
    name: str
    argv: tuple[str, ...]  # a string command is ("/bin/sh", "-c", it)
    user: str | None  # None: the agent user
    environment: tuple[tuple[str, str], ...]
    directory: str
    oneshot: bool
    restart: Restart
    max_restarts: int
    restart_window: float
    ready: tuple[str, Any] | None  # (kind, value): ("port", 8000), ("notify", True)…
    ready_timeout: float
    after: tuple[str, ...]
    stop_signal: int
    critical: bool
    log_max_bytes: int
    log_backups: int


class _Where:
    """Where a value came from, for its error: ``initd.yaml: services.web.ready``."""

    def __init__(self, path: str, *keys: str) -> None:
        self.path, self.keys = path, keys

    def __call__(self, *more: str) -> _Where:
        return _Where(self.path, *self.keys, *more)

    def fail(self, problem: str) -> InitdError:
        return InitdError(f"{self.path}: {'.'.join(self.keys)}: {problem}")

    def parse(self, parse: Callable[[Any], Any], value: object) -> Any:
        try:
            return parse(value)
        except ValueError as err:
            raise self.fail(f"{err} (got {shown(str(value), 80)})") from None


def load(raw: object, path: str) -> tuple[Service, ...]:
    """``services:`` as initd.yaml has it (None: none), checked whole, in the file's order."""
    if raw is None:
        return ()
    where = _Where(path, "services")
    if not isinstance(raw, dict):
        raise where.fail("expected a mapping of service names to services")
    if len(raw) > MAX_SERVICES:
        raise where.fail(f"at most {MAX_SERVICES} services")
    _owned_by_root(path)
    found = tuple(_service(str(name), spec, where(str(name))) for name, spec in raw.items())
    _check_after(found, where)
    return found


def _owned_by_root(path: str) -> None:
    """As root, services only from a file of root's that nobody else may write: a
    service is a process root starts, with the user it names."""
    if os.geteuid() != 0:
        return
    info = os.stat(path)
    if info.st_uid != 0 or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise InitdError(f"{path}: services are read only from a file of root's that only "
                         f"root may write (it is uid {info.st_uid}'s, mode "
                         f"{stat.S_IMODE(info.st_mode):o}): an image's file, never the "
                         "workspace's")


def _service(name: str, spec: object, where: _Where) -> Service:
    if not NAME.fullmatch(name):
        raise where.fail("a service name is lower-case letters, digits, '.', '_' and '-' "
                         "(at most 63), starting with a letter or digit")
    if name in RESERVED:
        raise where.fail(f"{name!r} is initd's own name: choose another")
    if not isinstance(spec, dict):
        raise where.fail("expected a mapping with at least 'command'")
    unknown = sorted(str(k) for k in spec if k not in KEYS)
    if unknown:
        raise where(unknown[0]).fail(f"unknown key (known: {', '.join(KEYS)})")
    if "command" not in spec:
        raise where.fail("no 'command': what to run")
    oneshot = _type(spec.get("type", "longrun"), where("type"))
    default_restart = Restart.NEVER if oneshot else Restart.ALWAYS
    policy = where("restart").parse(restart, spec.get("restart", default_restart))
    if oneshot and policy is not Restart.NEVER:
        raise where("restart").fail("a oneshot runs once: restart is never")
    log = _log(spec.get("log", {}), where("log"))
    return Service(
        name=name,
        argv=_command(spec["command"], where("command")),
        user=_user(spec.get("user"), where("user")),
        environment=_environment(spec.get("environment", {}), where("environment")),
        directory=_directory(spec.get("directory", "/"), where("directory")),
        oneshot=oneshot,
        restart=policy,
        max_restarts=where("max_restarts").parse(count, spec.get("max_restarts", 5)),
        restart_window=where("restart_window").parse(seconds, spec.get("restart_window", 60)),
        ready=_ready(spec.get("ready"), where("ready")),
        ready_timeout=where("ready_timeout").parse(seconds, spec.get("ready_timeout", 60)),
        after=_after(spec.get("after", ()), where("after")),
        stop_signal=where("stop_signal").parse(stop_signal, spec.get("stop_signal", "TERM")),
        critical=_flag(spec.get("critical", False), where("critical")),
        log_max_bytes=log[0],
        log_backups=log[1],
    )


def _type(value: object, where: _Where) -> bool:
    if value not in ("longrun", "oneshot"):
        raise where.fail(f"expected longrun or oneshot (got {shown(str(value), 40)})")
    return value == "oneshot"


def _command(value: object, where: _Where) -> tuple[str, ...]:
    if isinstance(value, str) and value.strip():
        return ("/bin/sh", "-c", value)
    if isinstance(value, list) and value and all(isinstance(v, str | int) for v in value):
        argv = tuple(str(v) for v in value)
        if any("\0" in arg for arg in argv) or not argv[0]:
            raise where.fail("an argument holds a NUL, or the program is empty")
        return argv
    raise where.fail("expected a list of arguments, or one string for /bin/sh -c")


def _user(value: object, where: _Where) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value):
        raise where.fail("expected a user name or uid")
    return str(value)


def _environment(value: object, where: _Where) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        raise where.fail("expected a mapping of variable names to values")
    pairs = []
    for key, item in value.items():
        name = str(key)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise where(name).fail("not a variable name")
        if isinstance(item, dict | list) or item is None:
            raise where(name).fail("expected a string, a number or a boolean")
        text = ("true" if item else "false") if isinstance(item, bool) else str(item)
        if "\0" in text:
            raise where(name).fail("holds a NUL")
        pairs.append((name, text))
    return tuple(pairs)


def _directory(value: object, where: _Where) -> str:
    if not isinstance(value, str) or not value.startswith("/"):
        raise where.fail("expected an absolute path")
    return value


def _ready(value: object, where: _Where) -> tuple[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) != 1:
        raise where.fail(f"expected one of {', '.join(READY_KINDS)}, e.g. 'port: 8000'")
    [(kind, item)] = value.items()
    if kind not in READY_KINDS:
        raise where.fail(f"expected one of {', '.join(READY_KINDS)} (got {shown(str(kind))})")
    if kind == "port":
        return kind, where(kind).parse(port, item)
    if kind == "http":
        return kind, where(kind).parse(url, item)
    if kind == "exec":
        return kind, _command(item, where(kind))
    if kind == "notify":
        if item is not True:
            raise where(kind).fail("expected true")
        return kind, True
    fd = where(kind).parse(count, item)
    if not 3 <= fd <= 255:
        raise where(kind).fail("expected a descriptor number from 3 to 255")
    return kind, fd


def _after(value: object, where: _Where) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
        raise where.fail("expected a list of service names")
    return tuple(dict.fromkeys(items))


def _flag(value: object, where: _Where) -> bool:
    if not isinstance(value, bool):
        raise where.fail("expected true or false")
    return value


def _log(value: object, where: _Where) -> tuple[int, int]:
    if not isinstance(value, dict):
        raise where.fail(f"expected a mapping with {', '.join(LOG_KEYS)}")
    unknown = sorted(str(k) for k in value if k not in LOG_KEYS)
    if unknown:
        raise where(unknown[0]).fail(f"unknown key (known: {', '.join(LOG_KEYS)})")
    size = where("max_bytes").parse(count, value.get("max_bytes", 1 << 20))
    if not 4096 <= size <= MAX_LOG_BYTES:
        raise where("max_bytes").fail(f"expected 4096 to {MAX_LOG_BYTES}")
    backups = where("backups").parse(count, value.get("backups", 3))
    if backups > 100:
        raise where("backups").fail("expected at most 100")
    return size, backups


def _check_after(found: tuple[Service, ...], where: _Where) -> None:
    """Every name in ``after`` is a service, and there is no cycle."""
    known = {service.name: service for service in found}
    for service in found:
        for name in service.after:
            if name not in known:
                raise where(service.name, "after").fail(
                    f"no service {shown(name)} (known: {', '.join(known)})")
    state: dict[str, int] = {}  # 1: being visited, 2: done

    def visit(name: str, path: tuple[str, ...]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            cycle = " -> ".join((*path[path.index(name):], name))
            raise where(name, "after").fail(f"a cycle: {cycle}")
        state[name] = 1
        for dep in known[name].after:
            visit(dep, (*path, name))
        state[name] = 2

    for service in found:
        visit(service.name, ())


def start_order(found: Mapping[str, Service]) -> list[str]:
    """Every service after what it depends on, otherwise in the file's order."""
    done: list[str] = []

    def visit(name: str) -> None:
        if name in done:
            return
        for dep in found[name].after:
            visit(dep)
        done.append(name)

    for name in found:
        visit(name)
    return done
