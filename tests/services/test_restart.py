"""Conformance: restarts, giving up, critical services, failed oneshots and a service that
ignores its stop signal (SERVICES-SPEC.md, "Restart", "Stop", "Exit code", "Start").

References, as read (the snapshot's commit and date):

- supervisord, docs/configuration.rst and docs/subprocess.rst (github:Supervisor/supervisor
  abc6046, 2025-12-21; https://supervisord.org/configuration.html,
  https://supervisord.org/subprocess.html): autorestart "If true, the process will be
  unconditionally restarted when it exits, without regard to its exit code";
  startretries "The number of serial failure attempts that supervisord will allow when
  attempting to start the program before giving up and putting the process into an FATAL
  state"; FATAL "The process could not be started successfully"; stopwaitsecs "If this
  number of seconds elapses before supervisord receives a SIGCHLD from the process,
  supervisord will attempt to kill it with a final SIGKILL".
- s6, doc/s6-supervise.html (github:skarnet/s6 d73e657, 2026-06-22;
  https://skarnet.org/software/s6/s6-supervise.html): "When ./finish dies ... it restarts
  ./run unless it has been told not to"; "There is a minimum 1-second delay between two
  ./run spawns, to avoid busylooping".
- s6-rc, doc/s6-rc.html (github:skarnet/s6-rc 50f4e65, 2026-06-22): "If a transition
  fails, s6-rc will not perform the transitions that depend on it".

Where the references' defaults differ, the spec decides: supervisord's startretries is 3
and its backoff adds a second a try (1, 2, 3 s); s6 waits 1 s; the spec counts restarts
inside a window (max_restarts 5 in 60 s) with a backoff doubling from 1 s to 30 s.
supervisord's stopwaitsecs is 10 s; the spec's one grace is --grace (8 s).
"""

from __future__ import annotations

import os
import shlex
import signal
from pathlib import Path

import pytest

from tests.service.support import call, verb
from tests.services.support import (
    Boot,
    alive,
    count,
    host_pid,
    pid_of,
    standin,
    wait_event,
    wait_state,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def counted(box: object, name: str) -> str:
    """A shell command line that says it started (the events file), for services that
    are shell strings (SERVICES-SPEC.md: a string is run by /bin/sh -c)."""
    return f"echo \"{name} start $$\" >> {box}/events"


@pytest.mark.parametrize("policy", ["always", "on-failure"])
def test_a_service_that_dies_is_started_again(boot: Boot, box: Path, policy: str) -> None:
    """supervisord's autorestart=true (and unexpected: a non-zero exit); s6-supervise
    restarts ./run unless told not to."""
    init = boot({"web": {"command": standin(box, "web"), "restart": policy}})
    first = pid_of(box, "web")
    (box / "web.pid").unlink()
    os.kill(host_pid(init, first), signal.SIGKILL)
    second = pid_of(box, "web")
    assert second != first and alive(host_pid(init, second))
    row = wait_state(init, "web", "running")
    assert row["pid"] != first and row["restarts"] == 1


def test_restart_never_and_a_clean_exit_under_on_failure_stay_exited(boot: Boot, box: Path) -> None:
    """supervisord autorestart=false: "the process will not be autorestarted"; unexpected
    (our on-failure): restarted only on an exit code not expected (ours: not 0)."""
    services = {"never": {"command": f"{counted(box, 'never')}; exit 3", "restart": "never"},
                "clean": {"command": f"{counted(box, 'clean')}; exit 0",
                          "restart": "on-failure"}}
    init = boot(services)
    never, clean = wait_state(init, "never", "exited"), wait_state(init, "clean", "exited")
    assert never["lastExitCode"] == 3 and clean["lastExitCode"] == 0
    wait_event(box, r"agent start \d+")
    assert count(box, r"never start \d+") == 1 and count(box, r"clean start \d+") == 1


def test_a_crash_loop_gives_up_fatal(boot: Boot, box: Path) -> None:
    """supervisord: past startretries "giving up and putting the process into an FATAL
    state". SERVICES-SPEC.md: more than max_restarts restarts inside restart_window =
    fatal, never restarted again; the agent and the other services are unaffected."""
    services = {"loop": {"command": f"{counted(box, 'loop')}; exit 3", "restart": "always",
                         "max_restarts": 2, "restart_window": 600},
                "calm": {"command": standin(box, "calm")}}
    init = boot(services)
    calm, agent = pid_of(box, "calm"), host_pid(init, pid_of(box, "agent"))
    assert wait_state(init, "loop", "backoff")  # supervisord's BACKOFF: waits between tries
    row = wait_state(init, "loop", "fatal")
    assert row["lastExitCode"] == 3
    assert count(box, r"loop start \d+") == 3  # the first start and its 2 restarts
    assert wait_state(init, "calm", "running")["pid"] == calm and alive(agent)
    # SERVICES-SPEC.md, "Control and visibility": a non-critical service down = degraded;
    # `initd services`: a table NAME STATE PID UPTIME RESTARTS LAST-EXIT READY-BY
    assert call(init.socket, "GET", "/v1/health")[1]["status"] == "degraded"
    table = verb("services", sock=init.socket)
    assert table.returncode == 0, table.stderr
    assert table.stdout.split("\n")[0].split() == ["NAME", "STATE", "PID", "UPTIME",
                                                     "RESTARTS", "LAST-EXIT", "READY-BY"]
    assert any(line.split()[:2] == ["loop", "fatal"] for line in table.stdout.splitlines())
    init.signal(signal.SIGTERM)
    assert init.wait(60) == 0  # the agent's exit code: a non-critical service's is not


@pytest.mark.parametrize(("command", "code"), [
    ("exit 3", 3),  # its last exit code
    ("kill -KILL $$", 128 + signal.SIGKILL),  # 128+S when killed by S
    ("exit 0", 1),  # 1 if that was 0 (restart: always restarts a clean exit too)
])
def test_a_critical_service_that_gives_up_stops_the_container(boot: Boot, box: Path, command: str,
                                                              code: int) -> None:
    """SERVICES-SPEC.md: "critical: true + fatal = the container stops"; its exit code is
    the service's last (128+S when killed by S), or 1 if that was 0. (supervisord has no
    such switch: a FATAL process leaves supervisord running.)"""
    gate = f"while [ ! -e {box}/go ]; do sleep 0.05; done"
    services = {"core": {"command": f"{counted(box, 'core')}; {gate}; {command}",
                         "restart": "always", "max_restarts": 1, "restart_window": 600,
                         "critical": True}}
    init = boot(services, *standin(box, "agent"))
    agent = host_pid(init, pid_of(box, "agent"))
    (box / "go").touch()
    assert init.wait(120) == code, init.stderr[-3000:]
    assert count(box, r"core start \d+") == 2
    assert count(box, "agent stopping SIGTERM") == 1  # the agent was stopped, not lost
    assert not alive(agent)


def test_a_failed_oneshot_blocks_its_dependents(boot: Boot, box: Path) -> None:
    """s6-rc: "If a transition fails, s6-rc will not perform the transitions that depend
    on it" (and keeps on with the independent ones). SERVICES-SPEC.md: "if it fails, its
    dependents never start (state blocked)"; the oneshot is ``failed``."""
    services = {"migrate": {"type": "oneshot", "command": standin(box, "migrate", "--exit", "4")},
                "web": {"command": standin(box, "web"), "after": ["migrate"]},
                "other": {"command": standin(box, "other")}}
    init = boot(services)
    assert wait_state(init, "migrate", "failed")["lastExitCode"] == 4
    assert wait_state(init, "web", "blocked")
    assert wait_state(init, "other", "running")
    assert count(box, r"web start \d+") == 0 and count(box, r"migrate start \d+") == 1
    assert alive(host_pid(init, pid_of(box, "agent")))


def test_a_failed_critical_oneshot_stops_the_container(boot: Boot, box: Path) -> None:
    """SERVICES-SPEC.md: a oneshot that fails, "if it is critical the container stops",
    with its exit code; its dependents never start."""
    # (it fails once the agent is up: a TERM before the agent's handler is set would end
    # it before it could say it got one, as any program's first milliseconds would)
    fails = ("until grep -q '^agent start ' " + shlex.quote(str(box / "events"))
             + "; do sleep 0.05; done; exec " + shlex.join(standin(box, "migrate", "--exit", "4")))
    services = {"migrate": {"type": "oneshot", "critical": True, "command": fails},
                "web": {"command": standin(box, "web"), "after": ["migrate"]}}
    init = boot(services)
    assert init.wait(120) == 4, init.stderr[-3000:]
    assert count(box, r"web start \d+") == 0
    assert count(box, "agent stopping SIGTERM") == 1


def test_a_service_that_ignores_term_is_killed_at_the_graces_end(boot: Boot, box: Path) -> None:
    """supervisord's stopwaitsecs: past it, "a final SIGKILL"; s6's timeout-kill the same.
    SERVICES-SPEC.md: one grace for everything (--grace), then KILL, to the process
    group. The stop ends (init.wait's deadline) and nothing of the service is left."""
    services = {"stubborn": {"command": standin(box, "stubborn", "--ignore-term")},
                "polite": {"command": standin(box, "polite")}}
    init = boot(services, more=("--grace", "2"))
    assert wait_state(init, "stubborn", "running") and wait_state(init, "polite", "running")
    stubborn = host_pid(init, pid_of(box, "stubborn"))
    init.signal(signal.SIGTERM)
    assert init.wait(90) == 0  # the agent's: it exited 0 on its TERM
    assert count(box, "stubborn stopping SIGTERM") == 1  # it was asked, and ignored it
    assert count(box, "stubborn stopped") == 0 and count(box, "polite stopped") == 1
    assert not alive(stubborn)
