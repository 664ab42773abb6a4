"""supervisor/services.py: the image's services driven as the supervisor's loop drives
them (poll their waitables, tick), real processes throughout: dependencies first, a
oneshot's failure blocking what needs it, readiness said by the service itself (sd_notify,
s6's notification fd) and only by it, a service not ready in time stopped, a critical
one ending the container's run, and the stop: dependents first, one deadline."""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from initd.config import log, settings
from initd.process import spawn
from initd.supervisor.services import ServiceSet, build

PYTHON = "/usr/bin/python3"  # (another user cannot run the pyenv one under /root)
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="services run as root here")


@pytest.fixture
def made(tmp_path: Path) -> Iterator[Callable[..., ServiceSet]]:
    sets: list[ServiceSet] = []

    def make(declared: dict[str, Any], grace: float = 5.0) -> ServiceSet:
        for spec in declared.values():
            spec.setdefault("user", "root")
        path = tmp_path / "initd.yaml"
        path.write_text(yaml.safe_dump({"services": declared}, sort_keys=False))
        config = settings.load(argparse.Namespace(config=str(path)), {})
        found = build(config._replace(grace=grace), None, log.get())
        assert found is not None
        sets.append(found)
        return found
    yield make
    for left in sets:
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


def test_each_starts_once_what_it_needs_is_ready(made: Callable[..., ServiceSet],
                                                 tmp_path: Path) -> None:
    order, flag = tmp_path / "order", tmp_path / "up"
    services = made({
        "worker": {"command": f"echo worker >> {order}; exec sleep 100", "after": ["web"]},
        "web": {"command": f"echo web >> {order}; exec sleep 100",
                "ready": {"exec": f"test -e {flag}"}, "after": ["migrate"]},
        "migrate": {"command": f"echo migrate >> {order}", "type": "oneshot"}})
    until(services, lambda: states(services)["web"] == "starting", "web started")
    assert states(services) == {"worker": "waiting", "web": "starting", "migrate": "done"}
    flag.touch()  # web is ready only now: worker starts after that, never before
    until(services, lambda: states(services)["worker"] == "running", "worker")
    assert order.read_text().split() == ["migrate", "web", "worker"]


def test_a_failed_oneshot_blocks_what_needs_it(made: Callable[..., ServiceSet],
                                               tmp_path: Path) -> None:
    services = made({"migrate": {"command": "exit 3", "type": "oneshot"},
                     "web": {"command": f"touch {tmp_path / 'ran'}", "after": ["migrate"]},
                     "worker": {"command": "sleep 100", "after": ["web"]},
                     "other": {"command": "exec sleep 100"}})
    until(services, lambda: states(services)["worker"] == "blocked", "blocked")
    assert states(services) == {"migrate": "failed", "web": "blocked", "worker": "blocked",
                                "other": "running"}
    assert not (tmp_path / "ran").exists() and services.gave_up is None


def test_a_critical_oneshot_that_fails_stops_the_container(
        made: Callable[..., ServiceSet]) -> None:
    services = made({"migrate": {"command": "exit 3", "type": "oneshot", "critical": True}})
    until(services, lambda: services.gave_up is not None, "gave up")
    assert services.gave_up == ("migrate", 3)


def test_a_critical_crash_loop_gives_up_with_its_code(made: Callable[..., ServiceSet]) -> None:
    services = made({"flaky": {"command": "exit 0", "critical": True, "max_restarts": 1}})
    until(services, lambda: services.gave_up is not None, "gave up")
    assert services.gave_up == ("flaky", 1)  # exit 0, but it gave up all the same
    assert states(services)["flaky"] == "fatal"
    assert services.describe()["flaky"]["restarts"] == 1


def test_sd_notify_ready_only_from_the_service(made: Callable[..., ServiceSet]) -> None:
    shared = Path(tempfile.mkdtemp(prefix="initd-notify-test-"))  # (nobody writes there)
    shared.chmod(0o777)
    said = shared / "socket"
    services = made({"n": {"command": f'echo "$NOTIFY_SOCKET" > {said}; exec sleep 100',
                           "ready": {"notify": True}, "user": "nobody"}})
    until(services, lambda: said.exists() and said.read_text().strip() != "", "its socket")
    path = said.read_text().strip()
    stat = os.stat(path)
    assert (stat.st_uid, stat.st_mode & 0o777) == (nobody(), 0o600)
    assert os.stat(os.path.dirname(path)).st_uid == 0  # root's directory: not movable
    other = subprocess.run(  # another user (the agent) cannot send it READY=1
        ["setpriv", "--reuid=12345", "--regid=12345", "--clear-groups", PYTHON, "-c",
         "import socket, sys; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
         "s.sendto(b'READY=1', sys.argv[1])", path], capture_output=True, text=True)
    assert "PermissionError" in other.stderr
    until(services, lambda: True, "a look")
    assert states(services)["n"] == "starting"
    subprocess.run(["setpriv", f"--reuid={nobody()}", "--regid=65534", "--clear-groups",
                    PYTHON, "-c", "import socket, sys\ns = socket.socket(socket.AF_UNIX, "
                    "socket.SOCK_DGRAM)\ns.sendto(b'STATUS=warm\\nREADY=1', sys.argv[1])",
                    path], check=True)
    until(services, lambda: states(services)["n"] == "running", "ready")
    assert services.describe()["n"]["status"] == "warm"
    shutil.rmtree(shared)


def nobody() -> int:
    import pwd

    return pwd.getpwnam("nobody").pw_uid


def test_s6_notification_fd(made: Callable[..., ServiceSet]) -> None:
    services = made({"s": {"command": "test -e /proc/self/fd/5 && exec sleep 100",
                           "ready": {"notify_fd": 5}},
                     "t": {"command": "sleep 0.2; echo >&7; exec sleep 100",
                           "ready": {"notify_fd": 7}}})
    until(services, lambda: states(services)["t"] == "running", "t ready")
    assert states(services)["s"] in ("starting", "backoff")  # fd 5 there, no line yet


def test_not_ready_in_time_is_stopped_and_restarted(made: Callable[..., ServiceSet]) -> None:
    services = made({"slow": {"command": "trap '' TERM; while :; do sleep 0.1; done",
                              "ready": {"port": free_port()}, "ready_timeout": 0.5}},
                    grace=0.5)
    first = wait_pid(services, "slow")
    until(services, lambda: services.describe()["slow"]["restarts"] >= 1, "a restart")
    assert not alive(first)  # TERM ignored: KILLed at the grace's end


def test_the_stop_is_dependents_first_within_one_deadline(made: Callable[..., ServiceSet],
                                                          tmp_path: Path) -> None:
    order = tmp_path / "order"
    stopper = ("trap 'echo {0} >> " + str(order) + "; exit 0' TERM; touch " + str(tmp_path)
               + "/{0}; while :; do sleep 0.05; done")
    services = made({"db": {"command": stopper.format("db"), "ready": ready(tmp_path, "db")},
                     "web": {"command": stopper.format("web"), "after": ["db"],
                             "ready": ready(tmp_path, "web")},
                     "stubborn": {"command": f"trap '' TERM; touch {tmp_path}/s; exec sleep 100",
                                  "after": ["web"], "ready": {"exec": f"test -e {tmp_path}/s"}}},
                    grace=1.0)
    until(services, lambda: all(s == "running" for s in states(services).values()), "all up")
    pids = [services.units[name].child.pid for name in services.units]  # type: ignore[union-attr]
    services.stop(time.monotonic() + 1.0)
    assert order.read_text().split() == ["web", "db"]
    assert not any(alive(pid) for pid in pids)
    assert services.describe()["stubborn"]["lastExitCode"] == 137  # KILLed at the deadline


def ready(tmp_path: Path, name: str) -> dict[str, str]:
    """Ready once its trap is set (a TERM before that would end it as a plain sh)."""
    return {"exec": f"test -e {tmp_path}/{name}"}


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
