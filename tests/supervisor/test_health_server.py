"""supervisor/health.py: the Probes server itself (``/healthz``, ``/readyz``), on a port
the kernel picks, answering from the state it is given. What a whole initd serves there
through boot and stop is tests/supervisor/test_health.py's; the attacks on the port are
tests/security's. Here: each answer, a bad request, a port taken, the bound on
connections still sending, and the close."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from initd.errors import InitdError
from initd.supervisor.health import MAX_WAITING, THREADS, Probes
from tests.support.harness import wait_for
from tests.support.probes import get, send_raw


@pytest.fixture
def probes() -> Iterator[Probes]:
    served = Probes(0)
    yield served
    served.close()


def answer(port: int, raw: bytes) -> tuple[int, dict[str, str], dict[str, Any]]:
    """(status, headers, JSON body) of what ``raw`` got."""
    head, _, body = send_raw(port, raw).partition(b"\r\n\r\n")
    status, *lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    assert int(headers["Content-Length"]) == len(body)
    return int(status.split()[1]), headers, json.loads(body)


def test_it_serves_on_every_thread_from_the_start(probes: Probes) -> None:
    assert len(probes.servers) == THREADS and probes.port > 0
    status, headers, body = answer(probes.port, b"GET /healthz HTTP/1.0\r\n\r\n")
    assert (status, headers["Content-Type"]) == (200, "application/json")
    assert body == {"status": "ok", "initd": {"phase": "starting"}, "agent": None}


def test_healthz_is_200_while_it_supervises_degraded_or_not(probes: Probes) -> None:
    state = {"initd": {"phase": "running"}, "agent": {"state": "running", "ready": True}}
    probes.update(state)
    assert get(probes.port, "/healthz") == (200, {"status": "ok", **state})
    degraded = {"initd": {"phase": "running", "problems": ["no CAP_KILL"]}, "agent": None}
    probes.update(degraded)
    assert get(probes.port, "/healthz") == (200, {"status": "degraded", **degraded})


@pytest.mark.parametrize(("state", "code", "reason"), [
    ({"initd": {"phase": "starting"}, "agent": None}, 503,
     "the agent has not been started yet"),
    ({"initd": {"phase": "running"}, "agent": {"state": "starting", "ready": False,
                                                "readyBy": "port 8080"}}, 503,
     "the agent is starting (ready once port 8080 answers)"),
    ({"initd": {"phase": "running"}, "agent": {"state": "backoff", "ready": False}}, 503,
     "the agent is backoff"),
    ({"initd": {"phase": "running"}, "agent": {"state": "running", "ready": True}}, 200,
     "the agent is ready"),
    ({"initd": {"phase": "stopping"}, "agent": {"state": "running", "ready": True}}, 503,
     "initd is stopping"),
], ids=["before", "starting", "restarting", "ready", "stopping"])
def test_readyz_follows_the_agent_and_the_stop(probes: Probes, state: dict[str, Any],
                                               code: int, reason: str) -> None:
    probes.update(state)
    assert get(probes.port, "/readyz") == (code, {"ready": code == 200, "reason": reason,
                                                  "agent": state["agent"]})


def test_the_state_given_is_the_state_served_whole(probes: Probes) -> None:
    probes.update({"initd": {"phase": "running"}, "agent": {"ready": True}, "extra": 1})
    probes.update({"initd": {"phase": "running"}, "agent": None})  # replaced, not merged
    assert get(probes.port, "/healthz")[1] == {"status": "ok", "initd": {"phase": "running"},
                                               "agent": None}


def test_any_other_path_is_a_small_404(probes: Probes) -> None:
    status, _, body = answer(probes.port, b"GET /" + b"x" * 5000 + b" HTTP/1.0\r\n\r\n")
    assert status == 404
    assert body["error"].endswith(": /healthz, /readyz and /metrics are served here")
    assert len(body["error"]) < 160  # (never the path whole)
    assert get(probes.port, "/") == (404, {"error": "no '/': /healthz, /readyz and /metrics "
                                                    "are served here"})


@pytest.mark.parametrize("raw", [b"\x00\xff garbage\r\n\r\n", b"GET\r\n\r\n",
                                 b"GET /healthz HTTP/9.9\r\n\r\n",
                                 b"GET /healthz HTTP/1.0\r\nBad header\r\n\r\n"],
                         ids=["binary", "no-path", "version", "header"])
def test_a_malformed_head_is_a_400_and_the_next_probe_is_served(probes: Probes,
                                                                raw: bytes) -> None:
    status, _, body = answer(probes.port, raw)
    assert status == 400 and body["error"]
    assert get(probes.port, "/healthz")[0] == 200


def test_a_port_taken_is_initds_error_naming_the_setting() -> None:
    taken = socket.create_server(("", 0), family=socket.AF_INET6, dualstack_ipv6=True)
    try:
        port = taken.getsockname()[1]
        with pytest.raises(InitdError) as failed:
            Probes(port)
        said = str(failed.value)
        assert said.startswith(f"cannot serve probes on port {port}: Address already in use")
        assert said.endswith(" (--health-port/INITD_HEALTH_PORT)")
    finally:
        taken.close()


def test_connections_still_sending_are_held_up_to_the_bound(probes: Probes) -> None:
    """A flood of half-sent requests: root holds at most MAX_WAITING of them (the one
    sending longest goes), and a probe, which sends its request whole, gets through."""
    flood = []
    try:
        for _ in range(3 * MAX_WAITING):
            conn = socket.create_connection(("127.0.0.1", probes.port), timeout=10)
            conn.sendall(b"GET /healthz HTTP/1.0\r\n")  # never the blank line
            flood.append(conn)
        assert get(probes.port, "/readyz")[0] == 503  # (answered: not ready yet)

        def held() -> int:
            """Connections the server still holds open (the others: closed, b"", or
            reset)."""
            still = 0
            for conn in flood:
                conn.setblocking(False)
                try:
                    conn.recv(1, socket.MSG_PEEK)
                except BlockingIOError:
                    still += 1  # open, nothing to read: still waited for
                except OSError:
                    pass  # reset: dropped
            return still

        wait_for(lambda: held() <= MAX_WAITING, what="the oldest dropped")
    finally:
        for conn in flood:
            conn.close()


def test_closed_it_answers_no_more() -> None:
    probes = Probes(0)
    port = probes.port
    assert get(port, "/healthz")[0] == 200
    probes.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=10).close()
