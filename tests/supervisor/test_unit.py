"""supervisor/unit.py: one of the image's services, for real: ready when it says so
(sd_notify, s6's notification fd) and only then, stopped when not ready in time (KILLed
when it ignores its stop signal), and started, stopped and restarted on request without
the supervisor's loop ever waiting; a stop on request is no crash (never restarted, never
a critical failure). Who may ask: test_services.py."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.supervisor.support import PYTHON, Made, alive, free_port, states, until, wait_pid

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="services run as root here")


def test_sd_notify_ready_only_from_the_service(made: Made) -> None:
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
    return pwd.getpwnam("nobody").pw_uid


def test_s6_notification_fd(made: Made) -> None:
    services = made({"s": {"command": "test -e /proc/self/fd/5 && exec sleep 100",
                           "ready": {"notify_fd": 5}},
                     "t": {"command": "sleep 0.2; echo >&7; exec sleep 100",
                           "ready": {"notify_fd": 7}}})
    until(services, lambda: states(services)["t"] == "running", "t ready")
    assert states(services)["s"] in ("starting", "backoff")  # fd 5 there, no line yet


def test_not_ready_in_time_is_stopped_and_restarted(made: Made) -> None:
    services = made({"slow": {"command": "trap '' TERM; while :; do sleep 0.1; done",
                              "ready": {"port": free_port()}, "ready_timeout": 0.5}},
                    grace=0.5)
    first = wait_pid(services, "slow")
    until(services, lambda: services.describe()["slow"]["restarts"] >= 1, "a restart")
    assert not alive(first)  # TERM ignored: KILLed at the grace's end


def test_stop_start_and_restart_on_request(made: Made) -> None:
    services = made({"web": {"command": "trap '' TERM; exec sleep 100", "critical": True}},
                    grace=0.5)
    first = wait_pid(services, "web")
    unit = services.units["web"]
    assert unit.request("stop") == "stopping"
    until(services, lambda: states(services)["web"] == "stopped", "stopped")
    assert not alive(first)  # TERM ignored: KILLed at the grace's end, by the loop
    assert services.gave_up is None  # a stop asked for is no failure of a critical one
    until(services, lambda: True, "a look")
    assert unit.child is None  # and never restarted by its policy
    assert unit.request("start") == "started"
    second = wait_pid(services, "web")
    assert unit.request("restart") == "restarting"
    until(services, lambda: unit.child is not None and unit.child.pid != second
          and states(services)["web"] == "running", "restarted")
    assert not alive(second) and unit.describe()["restarts"] == 2
    assert unit.request("start") == "already running"


def test_a_flood_of_notifications_costs_root_its_rate(made: Made) -> None:
    """A service (the agent's, maybe) that floods its NOTIFY_SOCKET before it is ready:
    root reads at most NOTES_BURST, then NOTES_RATE a second, whatever it sends. Proved
    by counts: with the pace's clock held still, 200 turns of the loop read the burst and
    not one datagram more."""
    from initd.supervisor.pace import Bucket
    from initd.supervisor.unit import NOTES_BURST, NOTES_RATE

    flood = ("import os, socket\ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
             "s.setblocking(False)\nwhile True:\n    try:\n"
             "        s.sendto(b'STATUS=junk', os.environ['NOTIFY_SOCKET'])\n"
             "    except BlockingIOError:\n        pass\n")
    services = made({"f": {"command": [PYTHON, "-c", flood], "ready": {"notify": True}}})
    wait_pid(services, "f")
    unit = services.units["f"]
    assert unit.notifier is not None
    reads = 0
    real = unit.notifier.ready

    def counted() -> bool:
        nonlocal reads
        reads += 1
        return real()
    unit.notifier.ready = counted  # type: ignore[method-assign]
    unit.notes = Bucket(NOTES_RATE, NOTES_BURST, clock=lambda: 0.0)  # (no time passes)
    turns = iter(range(200))
    until(services, lambda: next(turns, None) is None, "200 turns of the loop")
    assert reads == NOTES_BURST
    assert states(services)["f"] == "starting"
