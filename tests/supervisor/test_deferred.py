"""The hook service starts when it is first needed (supervisor/deferred.py): at the first
connection on the control socket, which root polls and never accepts (the service finds
it waiting), or once the agent has run a while; a CMD that exits sooner and never
connects costs no service at all; during the agent's stop a connection still starts it.
Proved by what happened (a start, a log line, a file made or not, the connection found
whole by whoever accepts it), never by time: the delay is made long (600 s) where a test
needs it not to pass."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from initd.config import log
from initd.config.values import Restart
from initd.http import bind
from initd.process import spawn
from initd.supervisor.backoff import Backoff
from initd.supervisor.deferred import DeferredService
from initd.supervisor.supervised import Supervised
from tests.hooks.support import forget_session
from tests.supervisor.test_boot import no_pid, stale
from tests.support.harness import _clean_env, wait_for

# the delay made long in the initd it is put into (PYTHONPATH: root's supervisor only)
LONG_SETTLE = "from initd.supervisor import deferred\ndeferred.SETTLE = 600.0\n"


class Service:
    """What the start gives, for DeferredService: it counts what it is asked."""

    def __init__(self) -> None:
        self.ticks = 0
        self.stopped: list[int] = []
        self.closed = False

    def waitables(self) -> list[Any]:
        return []

    def timeout(self) -> float | None:
        return None

    def tick(self) -> None:
        self.ticks += 1

    def push(self, state: dict[str, Any]) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"state": "running"}

    def stop(self, sig: int, signals: object = None, grace: float | None = None) -> int:
        self.stopped.append(sig)
        return 0

    def close(self) -> None:
        self.closed = True


class Made:
    """The start DeferredService calls: each call a new Service, kept."""

    def __init__(self) -> None:
        self.services: list[Service] = []

    def __call__(self) -> Service:
        self.services.append(Service())
        return self.services[-1]


def deferred(tmp_path: Path, settle: float = 600.0, running: bool = True
             ) -> tuple[DeferredService, Made, str]:
    path = str(tmp_path / "initd.sock")
    made = Made()
    return DeferredService(bind.listen(path), made, lambda: running, log.get(),
                           settle=settle), made, path


def connect(path: str, data: bytes = b"") -> socket.socket:
    client = socket.socket(socket.AF_UNIX)
    client.connect(path)
    client.sendall(data)
    return client


def test_nothing_asked_nothing_started(tmp_path: Path) -> None:
    later, made, path = deferred(tmp_path)
    later.tick()
    assert made.services == [] and later.waitables() == [later.listener]
    assert 0 < (later.timeout() or 0) <= 600
    assert later.describe()["state"] == "stopped" and later.describe()["pid"] is None
    assert later.stop(signal.SIGTERM) == 0  # never started: nothing to stop
    later.close()  # and the socket goes with the listener
    assert not os.path.exists(path)


def test_a_connection_starts_it_once_and_waits_for_it_unread(tmp_path: Path) -> None:
    later, made, path = deferred(tmp_path)
    first = connect(path, b"GET /v1/health HTTP/1.0\r\n\r\n")
    later.tick()
    assert len(made.services) == 1
    others = [connect(path) for _ in range(5)]  # more: the service's, not a second start
    later.tick()
    later.tick()
    assert len(made.services) == 1 and made.services[0].ticks == 2
    # root accepted nothing and read nothing: the first connection waits, whole, for the
    # service (here, this test) to accept it
    conn, _ = later.listener.accept()
    with conn:
        assert conn.recv(100) == b"GET /v1/health HTTP/1.0\r\n\r\n"
    later.stop(signal.SIGTERM)
    later.close()
    assert made.services[0].stopped == [signal.SIGTERM] and made.services[0].closed
    for client in (first, *others):
        client.close()


def test_the_delay_starts_it_only_while_the_agent_runs(tmp_path: Path) -> None:
    later, made, _ = deferred(tmp_path, settle=0, running=False)
    later.tick()  # due, but the agent is not there (exited, or waiting to restart)
    assert made.services == [] and later.timeout() is None
    later.running = lambda: True
    assert later.timeout() == 0
    later.tick()
    assert len(made.services) == 1
    later.close()


AGENT_THAT_ASKS_AS_IT_STOPS = """
import signal, socket, sys, time
def asked(*_):
    client = socket.socket(socket.AF_UNIX)
    client.connect(sys.argv[1])
    client.sendall(b"last words")
    sys.exit(0)
signal.signal(signal.SIGTERM, asked)
print("up", flush=True)
while True:
    time.sleep(1)
"""


def test_a_connection_during_the_agents_stop_starts_it(tmp_path: Path) -> None:
    """The agent's last event, sent as it stops, is served: the connection it makes
    during its grace starts the service (the delay does not)."""
    later, made, path = deferred(tmp_path)
    agent = Supervised("agent", spawn.Spec(
        argv=(sys.executable, "-c", AGENT_THAT_ASKS_AS_IT_STOPS, path), env=os.environ,
        cwd="/", stdout=spawn.PIPE), restart=Restart.NEVER,
        backoff=Backoff(max_restarts=0, window=60), grace=60, log=log.get())
    agent.start()
    try:
        assert agent.child is not None
        assert agent.child.popen.stdout.readline() == b"up\n"  # its handler is set
        assert agent.stop(signal.SIGTERM, beside=later) == 0  # (its own exit, in time)
        assert len(made.services) == 1
        conn, _ = later.listener.accept()
        with conn:
            assert conn.recv(100) == b"last words"
    finally:
        later.close()


def long_settle(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "sitecustomize.py").write_text(LONG_SETTLE)
    env = _clean_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    return env


@pytest.mark.slow
def test_a_cmd_that_never_asks_costs_no_service(initd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``true`` with a workspace: no service started, none stopped, and not even the
    session's state made (the service's start makes it)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    sid = f"lazy-{uuid.uuid4().hex[:8]}"
    init = initd(["-v", "--workspace", str(ws), "--session-id", sid, "--hooks-dir",
                  str(tmp_path / "no-image"), "--", "true"])
    assert init.wait(60) == 0, init.stderr
    assert "hook service start" not in init.stderr
    assert not (Path(os.environ["HOME"]) / ".discobot" / sid).exists()
    assert not os.path.exists(init.socket)  # (bound, and gone with initd)


WAITS_FOR_RECOVERY = """#!/bin/sh
i=0  # never a request: the delay starts the service, which recovers what was left
until grep -q '"failure"' "$STATUS" 2>/dev/null; do
  i=$((i + 1)); [ "$i" -lt 1200 ] || exit 9
  sleep 0.05
done
"""


@pytest.mark.slow
def test_an_agent_that_runs_on_gets_its_service_unasked(initd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """No request at all: once the agent has run a while the service starts, and does
    what it does at its start unasked (what a dead runner left "running", recovered)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    sid = f"lazy-{uuid.uuid4().hex[:8]}"
    status = Path(os.environ["HOME"]) / ".discobot" / sid / "hooks" / "status.json"
    status.parent.mkdir(parents=True)
    status.write_text(json.dumps({"version": 1, "hooks": {
        "20-stale": stale("20-stale", no_pid(), 12345)}, "pendingHooks": [],
        "lastEvaluatedAt": None}))
    agent = tmp_path / "agent.sh"
    agent.write_text(WAITS_FOR_RECOVERY)
    agent.chmod(0o755)
    try:
        init = initd(["-vv", "--workspace", str(ws), "--session-id", sid, "--hooks-dir",
                      str(tmp_path / "no-image"), "--", str(agent)],
                     env={**_clean_env(), "STATUS": str(status)})
        assert init.wait(90) == 0, init.stderr
        assert "hook service needed" in init.stderr and "the agent has run for" in init.stderr
    finally:
        forget_session(sid)


ASKS_AS_IT_STOPS = """#!/bin/sh
trap '{py} -m initd health > "$OUT/health.json"; exit 0' TERM
touch "$OUT/up"
while :; do sleep 0.05; done
"""


@pytest.mark.slow
def test_the_agents_request_as_it_stops_is_answered(initd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Stopped before the service ever started (the delay made 600 s): the agent's last
    request, made in its grace, starts it and is answered, and the stop ends with the
    agent's own code, not the grace's KILL."""
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    agent = tmp_path / "agent.sh"
    agent.write_text(ASKS_AS_IT_STOPS.format(py=sys.executable))
    agent.chmod(0o755)
    init = initd(["-vv", "--workspace", str(ws), "--grace", "60", "--hooks-dir",
                  str(tmp_path / "no-image"), "--", str(agent)],
                 env={**long_settle(tmp_path), "OUT": str(out)})
    wait_for(lambda: (out / "up").exists(), timeout=60, what="the agent")
    assert "hook service start" not in init.stderr  # (600 s: not yet)
    init.signal(signal.SIGTERM)
    assert init.wait(90) == 0, init.stderr
    health = json.loads((out / "health.json").read_text())
    assert health["status"] == "ok" and health["service"]["pid"], health
    assert "a client connected while the agent stopped" in init.stderr
