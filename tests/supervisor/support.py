"""What the tests of the image's services share (tests/supervisor/test_services.py,
test_unit.py): a set of services made from initd.yaml text and driven as the
supervisor's loop drives it (poll its waitables, tick), and looks at its processes."""

from __future__ import annotations

import argparse
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from initd.config import log, settings
from initd.process import spawn
from initd.supervisor.services import ServiceSet, build

PYTHON = "/usr/bin/python3"  # (another user cannot run the pyenv one under /root)


class Made:
    """Sets of services made in ``tmp``; ``close`` stops every one."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.sets: list[ServiceSet] = []

    def __call__(self, declared: dict[str, Any], grace: float = 5.0) -> ServiceSet:
        for spec in declared.values():
            spec.setdefault("user", "root")
        path = self.tmp / "initd.yaml"
        logs = self.tmp / "logs"  # (never /var/log/initd in a test)
        path.write_text(yaml.safe_dump({"services": declared, "services_log_dir": str(logs)},
                                       sort_keys=False))
        config = settings.load(argparse.Namespace(config=str(path)), {})
        found = build(config._replace(grace=grace), None, log.get())
        assert found is not None
        self.sets.append(found)
        return found

    def close(self) -> None:
        for left in self.sets:
            left.stop(time.monotonic() + 2)


def until(services: ServiceSet, done: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60  # (a deadline on an event, under load)
    services.start_due()
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}: " \
            f"{services.describe()}"
        wait = services.timeout()
        spawn.wait_fds(services.waitables(), 0.05 if wait is None else min(wait, 0.05))
        services.tick()


def states(services: ServiceSet) -> dict[str, str]:
    return {name: shown["state"] for name, shown in services.describe().items()}


def ready_when(tmp: Path, name: str) -> dict[str, str]:
    """Ready once its trap is set (a TERM before that would end it as a plain sh)."""
    return {"exec": f"test -e {tmp}/{name}"}


def wait_pid(services: ServiceSet, name: str) -> int:
    until(services, lambda: services.units[name].child is not None, f"{name} started")
    child = services.units[name].child
    assert child is not None
    return child.pid


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
