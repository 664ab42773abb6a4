"""Faults: what a container's processes suffer, one at a time, and what must hold
afterwards (SERVICES-SPEC.md, "Restart", "Stop", "Behaviour").

- kill -9 of a service: it is restarted (s6-supervise: "When ./run dies ... it restarts
  ./run unless it has been told not to", github:skarnet/s6 d73e657, 2026-06-22), and
  nothing else moves: the other services, the agent, the hook service keep their pids.
- kill -9 of the hook service: the services keep running (they are the supervisor's).
- kill -9 of the supervisor: PID 1 ends the container and nothing is left behind, in a
  PID namespace and as a plain subreaper alike.
- a service that forks away (a double fork): its orphan is in its process group and
  stopped with it (supervisord's stopasgroup: "send the stop signal to the whole process
  group", github:Supervisor/supervisor abc6046, 2025-12-21), at a stop of the service and
  at the container's.
- a service that never becomes ready: after ready_timeout, a failed start (s6-rc,
  doc/s6-rc.html, github:skarnet/s6-rc 50f4e65, 2026-06-22: "The transition will fail if
  a timeout occurs" ... "If an up transition fails, s6-rc sends an explicit s6-svc -d
  command to the longrun"); what depends on it never starts, everything else runs on.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psutil
import pytest

from tests.service.support import call, service_process
from tests.services.support import (
    Boot,
    alive,
    count,
    host_pid,
    pid_of,
    standin,
    supervisor,
    wait_event,
    wait_state,
)
from tests.support.harness import free_port, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def two(box: Path, port: int) -> dict[str, object]:
    """web (ready when its port answers) and worker (ready once started)."""
    return {"web": {"command": standin(box, "web", "--ready", f"port:{port}"),
                    "ready": {"port": port}},
            "worker": {"command": standin(box, "worker")}}


@pytest.mark.parametrize("victim", ["web", "worker"])
def test_a_killed_service_is_restarted_and_nothing_else_moves(boot: Boot, box: Path,
                                                              victim: str) -> None:
    init = boot(two(box, free_port()))
    before = {name: wait_state(init, name, "running")["pid"] for name in ("web", "worker")}
    agent, hooks = host_pid(init, pid_of(box, "agent")), service_process(init)
    os.kill(host_pid(init, before[victim]), signal.SIGKILL)
    row = wait_for(lambda: (r := wait_state(init, victim, "running"))["pid"] != before[victim]
                   and r, timeout=60, what=f"{victim} started again")
    assert row["restarts"] == 1  # type: ignore[index]
    other = "worker" if victim == "web" else "web"
    assert wait_state(init, other, "running")["pid"] == before[other]
    assert wait_state(init, other, "running")["restarts"] == 0
    assert alive(agent) and hooks.is_running() and service_process(init).pid == hooks.pid


def test_a_killed_hook_service_leaves_the_services_running(boot: Boot, box: Path) -> None:
    init = boot(two(box, free_port()))
    before = {name: wait_state(init, name, "running")["pid"] for name in ("web", "worker")}
    agent, hooks = host_pid(init, pid_of(box, "agent")), service_process(init)
    hooks.kill()
    wait_for(lambda: service_process(init).pid != hooks.pid, timeout=60,
             what="the hook service started again")
    after = {name: wait_state(init, name, "running")["pid"] for name in ("web", "worker")}
    assert after == before and alive(agent)
    assert count(box, r"(web|worker) start \d+") == 2  # neither started twice


@pytest.mark.parametrize("pidns", [True, False], ids=["pid1", "subreaper"])
def test_a_killed_supervisor_ends_the_container_and_leaves_nothing(boot: Boot, box: Path,
                                                                   pidns: bool) -> None:
    services = {**two(box, free_port()),
                "forker": {"command": standin(box, "forker", "--orphan")}}
    init = boot(services, pidns=pidns)
    assert wait_state(init, "web", "running") and wait_state(init, "forker", "running")
    wait_event(box, r"forker orphan \d+")
    everything = init.descendants()
    sup = supervisor(init)
    assert len(everything) > 5  # the agent, the hook service, 3 services, an orphan…
    sup.kill()
    init.wait(60)  # PID 1 ended: the container is over (whatever its exit code)
    left = [p for p in everything if _running(p)]
    assert left == [], [p.cmdline() for p in left]


def _running(p: psutil.Process) -> bool:
    """Still there, and the same process (psutil compares its start time: a pid reused
    since is another process), not a zombie."""
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def test_a_double_forked_orphan_is_stopped_with_its_service(boot: Boot, box: Path) -> None:
    services = {"forker": {"command": standin(box, "forker", "--orphan")},
                "worker": {"command": standin(box, "worker")}}
    init = boot(services)
    orphan = host_pid(init, int(wait_event(box, r"forker orphan (\d+)").group(1)))
    assert alive(orphan) and wait_state(init, "forker", "running")
    code, body = call(init.socket, "POST", "/v1/services/forker/stop")
    assert 200 <= code < 300, body  # (the agent's own service: its default user)
    stopped = wait_state(init, "forker", "stopped")
    wait_for(lambda: not alive(orphan), timeout=60, what="the orphan stopped")
    assert wait_state(init, "worker", "running") and alive(host_pid(init, pid_of(box, "agent")))
    assert stopped["restarts"] == 0  # a stop asked for is no crash: not started again…
    code, body = call(init.socket, "POST", "/v1/services/forker/start")
    assert 200 <= code < 300, body  # …until asked
    wait_for(lambda: count(box, r"forker start \d+") == 2, timeout=60, what="forker again")
    assert wait_state(init, "forker", "running")


def test_a_double_forked_orphan_is_not_left_behind_by_the_stop(boot: Boot, box: Path) -> None:
    """As a plain subreaper (no PID namespace to end it): the container's stop stops it."""
    init = boot({"forker": {"command": standin(box, "forker", "--orphan")}}, pidns=False)
    orphan = host_pid(init, int(wait_event(box, r"forker orphan (\d+)").group(1)))
    init.signal(signal.SIGTERM)
    assert init.wait(60) == 0
    assert not alive(orphan)


def test_a_service_that_never_becomes_ready_is_a_failed_start(boot: Boot, box: Path) -> None:
    """Its port never answers: after ready_timeout it is stopped and started again (the
    restart policy), and past max_restarts it is fatal; its dependent never starts
    (blocked), the agent and the other service run on, and the container's stop ends."""
    services = {"never": {"command": standin(box, "never"), "ready": {"port": free_port()},
                          "ready_timeout": 2, "restart": "always", "max_restarts": 1,
                          "restart_window": 600},
                "web": {"command": standin(box, "web"), "after": ["never"]},
                "worker": {"command": standin(box, "worker")}}
    init = boot(services, more=("--grace", "3"))
    first = host_pid(init, int(wait_event(box, r"never start (\d+)").group(1)))
    worker = wait_state(init, "worker", "running")["pid"]
    assert wait_state(init, "never", "starting")
    wait_for(lambda: count(box, r"never start \d+") == 2, timeout=60, what="a second start")
    assert not alive(first)  # the failed start was stopped before the next one
    assert wait_state(init, "never", "fatal")
    assert wait_state(init, "web", "blocked") and count(box, r"web start \d+") == 0
    assert wait_state(init, "worker", "running")["pid"] == worker
    agent = host_pid(init, pid_of(box, "agent"))
    init.signal(signal.SIGTERM)
    assert init.wait(60) == 0 and not alive(agent)
