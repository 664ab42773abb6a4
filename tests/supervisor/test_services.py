"""supervisor/services.py: the image's services driven as the supervisor's loop drives
them (poll their waitables, tick), real processes throughout: dependencies first, a
oneshot's failure blocking what needs it, a critical one ending the container's run,
what the agent may ask of them (only of its own), and the stop: dependents first, one
deadline. One service's own life (readiness, its deadline, a request): test_unit.py."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.supervisor.support import Made, alive, ready_when, states, until

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="services run as root here")


def test_each_starts_once_what_it_needs_is_ready(made: Made,
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
    until(services, lambda: len(order.read_text().split()) == 3, "worker")
    assert order.read_text().split() == ["migrate", "web", "worker"]


def test_a_failed_oneshot_blocks_what_needs_it(made: Made,
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
        made: Made) -> None:
    services = made({"migrate": {"command": "exit 3", "type": "oneshot", "critical": True}})
    until(services, lambda: services.gave_up is not None, "gave up")
    assert services.gave_up == ("migrate", 3)


def test_a_critical_crash_loop_gives_up_with_its_code(made: Made) -> None:
    services = made({"flaky": {"command": "exit 0", "critical": True, "max_restarts": 1}})
    until(services, lambda: services.gave_up is not None, "gave up")
    assert services.gave_up == ("flaky", 1)  # exit 0, but it gave up all the same
    assert states(services)["flaky"] == "fatal"
    assert services.describe()["flaky"]["restarts"] == 1


def test_the_stop_is_dependents_first_within_one_deadline(made: Made,
                                                          tmp_path: Path) -> None:
    order = tmp_path / "order"
    stopper = ("trap 'echo {0} >> " + str(order) + "; exit 0' TERM; touch " + str(tmp_path)
               + "/{0}; while :; do sleep 0.05; done")
    services = made({"db": {"command": stopper.format("db"), "ready": ready_when(tmp_path, "db")},
                     "web": {"command": stopper.format("web"), "after": ["db"],
                             "ready": ready_when(tmp_path, "web")},
                     "stubborn": {"command": f"trap '' TERM; touch {tmp_path}/s; exec sleep 100",
                                  "after": ["web"], "ready": {"exec": f"test -e {tmp_path}/s"}}},
                    grace=1.0)
    until(services, lambda: all(s == "running" for s in states(services).values()), "all up")
    pids = [services.units[name].child.pid for name in services.units]  # type: ignore[union-attr]
    services.stop(time.monotonic() + 1.0)
    assert order.read_text().split() == ["web", "db"]
    assert not any(alive(pid) for pid in pids)
    assert services.describe()["stubborn"]["lastExitCode"] == 137  # KILLed at the deadline


def test_the_agent_controls_only_its_own_services(made: Made) -> None:
    import pwd

    nobody = pwd.getpwnam("nobody").pw_uid
    services = made({"mine": {"command": "exec sleep 100", "user": "nobody"},
                     "roots": {"command": "exec sleep 100"},
                     "later": {"command": "exec sleep 100", "after": ["never"],
                               "user": "nobody"},
                     "never": {"command": "exec sleep 100", "ready": {"exec": "false"},
                               "user": "nobody"}})
    until(services, lambda: states(services)["roots"] == "running", "roots")
    pid = services.units["roots"].child.pid  # type: ignore[union-attr]
    assert services.control("roots", "restart", nobody)["status"] == 403
    assert services.control("roots", "stop", nobody)["status"] == 403
    assert services.units["roots"].child.pid == pid  # type: ignore[union-attr]
    assert services.control("ghost", "stop", nobody)["status"] == 404
    assert services.control("later", "start", nobody)["status"] == 409
    assert services.control("mine", "stop", nobody) == {"status": 200, "result": "stopping"}
    until(services, lambda: states(services)["mine"] == "stopped", "mine stopped")
    assert services.control("roots", "restart", None)["status"] == 200  # (not root: all one)


def test_the_stop_waves_and_where_the_logs_go(made: Made) -> None:
    from initd.supervisor import services as module

    found = made({"db": {"command": "x"}, "cache": {"command": "x"},
                  "web": {"command": "x", "after": ["db", "cache"]},
                  "worker": {"command": "x", "after": ["web"]}, "alone": {"command": "x"}})
    started = ["db", "cache", "alone", "web", "worker"]
    assert module._waves(list(reversed(started)), found.units) == [
        ["worker", "alone"], ["web"], ["cache", "db"]]  # (a wave: latest started first)
    assert found.log_dir == str(made.tmp / "logs")
