"""initd.yaml's ``services:`` (initd/config/services.py): every key read into its record,
its defaults (a longrun restarts always, a oneshot never), and every mistake an error
that names the file, the service and the key, before anything runs. Only a file of
root's that only root may write declares services (invariants 8-11): the workspace's,
or one another user may change, is refused whole."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
import yaml

from initd.config import services
from initd.config.values import Restart
from initd.errors import InitdError


def load(tmp_path: Path, declared: Any, mode: int = 0o644) -> tuple[services.Service, ...]:
    path = tmp_path / "initd.yaml"
    path.write_text(yaml.safe_dump({"services": declared}, sort_keys=False))
    path.chmod(mode)
    return services.load(yaml.safe_load(path.read_text())["services"], str(path))


def error(tmp_path: Path, declared: Any) -> str:
    with pytest.raises(InitdError) as err:
        load(tmp_path, declared)
    return str(err.value)


def test_every_key_is_read(tmp_path: Path) -> None:
    [web] = load(tmp_path, {"web": {
        "command": ["python3", "-m", "http.server", 8000], "user": "nobody",
        "environment": {"MODE": "prod", "WORKERS": 4, "DEBUG": False},
        "directory": "/srv", "restart": "on-failure", "max_restarts": 3,
        "restart_window": 30, "ready": {"http": "http://127.0.0.1:8000/health"},
        "ready_timeout": 20, "stop_signal": "INT", "critical": True,
        "log": {"max_bytes": 65536, "backups": 2}}})
    assert web == services.Service(
        name="web", argv=("python3", "-m", "http.server", "8000"), user="nobody",
        environment=(("MODE", "prod"), ("WORKERS", "4"), ("DEBUG", "false")),
        directory="/srv", oneshot=False, restart=Restart.ON_FAILURE, max_restarts=3,
        restart_window=30.0, ready=("http", "http://127.0.0.1:8000/health"),
        ready_timeout=20.0, after=(), stop_signal=signal.SIGINT, critical=True,
        log_max_bytes=65536, log_backups=2)


def test_defaults_and_a_string_command(tmp_path: Path) -> None:
    [run, once] = load(tmp_path, {"run": {"command": "exec sleep 1"},
                                  "once": {"command": ["true"], "type": "oneshot"}})
    assert run.argv == ("/bin/sh", "-c", "exec sleep 1")
    assert (run.restart, run.oneshot, run.user, run.directory, run.ready) == (
        Restart.ALWAYS, False, None, "/", None)
    assert (run.stop_signal, run.critical, run.log_max_bytes, run.log_backups) == (
        signal.SIGTERM, False, 1 << 20, 3)
    assert (once.restart, once.oneshot) == (Restart.NEVER, True)


@pytest.mark.parametrize("ready, expected", [
    ({"port": 8080}, ("port", 8080)),
    ({"exec": ["test", "-e", "/tmp/up"]}, ("exec", ("test", "-e", "/tmp/up"))),
    ({"exec": "test -e /tmp/up"}, ("exec", ("/bin/sh", "-c", "test -e /tmp/up"))),
    ({"notify": True}, ("notify", True)),
    ({"notify_fd": 3}, ("notify_fd", 3)),
])
def test_each_readiness(tmp_path: Path, ready: dict[str, Any], expected: Any) -> None:
    [found] = load(tmp_path, {"s": {"command": "x", "ready": ready}})
    assert found.ready == expected


def test_the_start_order_puts_dependencies_first(tmp_path: Path) -> None:
    found = load(tmp_path, {"worker": {"command": "x", "after": ["web", "migrate"]},
                            "web": {"command": "x", "after": "migrate"},
                            "migrate": {"command": "x", "type": "oneshot"},
                            "other": {"command": "x"}})
    assert services.start_order({s.name: s for s in found}) == [
        "migrate", "web", "worker", "other"]


@pytest.mark.parametrize("declared, says", [
    ({"web": {"command": "x", "ready": {"prot": 80}}},
     "initd.yaml: services.web.ready: expected one of port, http, exec, notify, notify_fd "
     "(got 'prot')"),
    ({"web": {"command": "x", "ready": {"port": 70000}}},
     "services.web.ready.port: expected a TCP port number from 1 to 65535 (got '70000')"),
    ({"web": {"command": "x", "colour": "red"}}, "services.web.colour: unknown key"),
    ({"web": {"user": "x"}}, "services.web: no 'command'"),
    ({"web": {"command": []}}, "services.web.command: expected a list of arguments"),
    ({"web": {"command": "x", "after": ["db"]}}, "services.web.after: no service 'db'"),
    ({"a": {"command": "x", "after": ["b"]}, "b": {"command": "x", "after": ["a"]}},
     "a cycle: a -> b -> a"),
    ({"agent": {"command": "x"}}, "services.agent: 'agent' is initd's own name"),
    ({"Web!": {"command": "x"}}, "services.Web!: a service name is lower-case"),
    ({"o": {"command": "x", "type": "oneshot", "restart": "always"}},
     "services.o.restart: a oneshot runs once"),
    ({"web": {"command": "x", "type": "daemon"}}, "services.web.type: expected longrun or "
     "oneshot"),
    ({"web": {"command": "x", "stop_signal": "KILL"}}, "services.web.stop_signal:"),
    ({"web": {"command": "x", "environment": {"A B": "1"}}},
     "services.web.environment.A B: not a variable name"),
    ({"web": {"command": "x", "environment": {"A": {"nested": 1}}}},
     "services.web.environment.A: expected a string"),
    ({"web": {"command": "x", "directory": "srv"}}, "services.web.directory: expected an "
     "absolute path"),
    ({"web": {"command": "x", "critical": "yes"}}, "services.web.critical: expected true or "
     "false"),
    ({"web": {"command": "x", "log": {"max_bytes": 10}}}, "services.web.log.max_bytes: "
     "expected 4096"),
    ({"web": {"command": "x", "ready": {"notify_fd": 1}}}, "services.web.ready.notify_fd: "
     "expected a descriptor number from 3"),
    (["web"], "services: expected a mapping of service names to services"),
])
def test_each_mistake_names_file_service_and_key(tmp_path: Path, declared: Any,
                                                 says: str) -> None:
    assert says in error(tmp_path, declared)


@pytest.mark.skipif(os.geteuid() != 0, reason="whose the file is matters to root only")
@pytest.mark.parametrize("owner, mode", [(1000, 0o644), (0, 0o664), (0, 0o646)])
def test_as_root_services_only_from_roots_own_file(tmp_path: Path, owner: int,
                                                  mode: int) -> None:
    path = tmp_path / "initd.yaml"
    path.write_text("services: {web: {command: x}}\n")
    os.chown(path, owner, -1)
    path.chmod(mode)
    with pytest.raises(InitdError, match="services are read only from a file of root's"):
        services.load({"web": {"command": "x"}}, str(path))
