"""The WSGI server around the request parser (initd/http/server.py): a failure of ours costs
its connection and one line, never the thread that reads every request; the probes' cap
of waiting connections drops the oldest, and a probe whose request is all there gets
through."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from initd.http import server as httpd
from tests.support.harness import wait_for
from tests.support.probes import get, send_raw

GET = b"GET /healthz HTTP/1.1\r\nHost: probe"


class Faulty(httpd.UnixWSGIServer):
    """A server with a bug of ours for one path: what the guard is for."""

    def _request(self, waiting: httpd._Waiting) -> dict[str, Any] | None:
        environ = super()._request(waiting)
        if environ is not None and environ["PATH_INFO"] == "/bug":
            raise RuntimeError("a bug of ours\nforged: line")
        return environ


def hello(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Length", "2")])
    return [b"{}"]


@pytest.fixture
def faulty(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, Faulty]]:
    monkeypatch.setattr(httpd, "SAY_EVERY", 3600.0)  # (however slow this machine is)
    listener = socket.create_server(("127.0.0.1", 0))
    server = Faulty(listener, hello, frozenset(("/healthz",)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield listener.getsockname()[1], server
    server.shutdown()
    server.server_close()


def test_a_failure_costs_its_connection_and_one_line_not_the_thread(faulty, capfd) -> None:  # type: ignore[no-untyped-def]
    port, _ = faulty
    for _ in range(20):
        assert send_raw(port, b"GET /bug HTTP/1.1\r\n\r\n") == b""  # dropped, no answer
    assert get(port)[0] == 200
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if "a connection failed" in line]
    assert lines == ["initd service: a connection failed: dropped: RuntimeError: "
                     "'a bug of ours\\nforged: line' (said at most every 3600 s)"], err


def test_the_probes_cap_drops_the_oldest_and_a_probe_gets_through(  # type: ignore[no-untyped-def]
        faulty, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe port hands over a connection once it has sent something (health.DEFER),
    so a probe's request is all there when it is accepted: it is answered then and there,
    and costs no one their place. One that must wait makes room: the oldest goes."""
    port, server = faulty
    server.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 10)
    server.max_waiting = 4  # (the probe port's: health.MAX_WAITING)
    monkeypatch.setattr(httpd, "READ_TIMEOUT", 3600.0)  # dropped for the cap, not its time
    held = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(5)]
    for conn in held[:4]:
        conn.sendall(GET)  # a head that never ends
    wait_for(lambda: len(server._waiting) == 4, what="four held")
    assert get(port)[0] == 200  # answered as it came: no one dropped
    held[0].setblocking(False)
    with pytest.raises(BlockingIOError):
        held[0].recv(10)  # (still open, nothing to read)
    held[0].settimeout(30)
    held[4].sendall(GET)  # a fifth that must wait: the oldest makes room
    assert held[0].recv(10) == b""
    wait_for(lambda: len(server._waiting) == 4, what="the fifth held, four in all")
    for conn in held:
        conn.close()
