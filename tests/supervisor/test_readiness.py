"""supervisor/readiness.py: is the agent ready? Its port accepts (IPv4, else IPv6) or its
URL answers 200-399; a Probe runs the check in a thread and makes its descriptor readable
once it passed, and a cancel ends it. Real sockets and a real HTTP server on ports the
kernel picks."""

from __future__ import annotations

import http.server
import select
import socket
import threading
from collections.abc import Iterator

import pytest

from initd.supervisor import readiness


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_port_is_ready_once_something_listens_on_it() -> None:
    port = free_port()
    check = readiness.port_check(port)
    assert check() is False
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", port))
        listener.listen(1)
        assert check() is True


def test_a_port_on_ipv6_loopback_alone_counts() -> None:
    """Node's "localhost" may be ::1 only."""
    try:
        listener = socket.socket(socket.AF_INET6)
        listener.bind(("::1", 0))
    except OSError:
        pytest.skip("cannot run here: no IPv6 loopback in this network namespace")
    with listener:
        listener.listen(1)
        assert readiness.port_check(listener.getsockname()[1])() is True


class Answer(http.server.BaseHTTPRequestHandler):
    codes: dict[str, int] = {"/ok": 200, "/moved": 302, "/down": 503}  # noqa: RUF012

    def do_GET(self) -> None:
        self.send_response(self.codes.get(self.path.split("?")[0], 404))
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize(("path", "ready"), [("/ok", True), ("/moved", True),
                                             ("/down", False), ("/none?x=1", False)])
def test_a_url_is_ready_when_it_answers_200_to_399(server: str, path: str, ready: bool
                                                   ) -> None:
    assert readiness.url_check(server + path)() is ready


def test_a_url_nobody_serves_is_not_ready() -> None:
    assert readiness.url_check(f"http://127.0.0.1:{free_port()}/")() is False


def test_a_probe_turns_readable_once_its_check_passes() -> None:
    passing = threading.Event()
    probe = readiness.Probe(passing.is_set)
    try:
        assert select.select([probe], [], [], 0.2)[0] == []  # (not yet)
        passing.set()
        assert select.select([probe], [], [], 30)[0] == [probe]
        assert probe.passed.is_set()
    finally:
        probe.cancel()


def test_a_cancelled_probe_stops_checking() -> None:
    calls: list[int] = []
    stopped = threading.Event()

    def check() -> bool:
        calls.append(1)
        if len(calls) > 1_000:
            stopped.set()
        return False

    probe = readiness.Probe(check)
    probe.cancel()
    seen = len(calls)
    assert not stopped.wait(1.5)  # (a probe still running would check every 0.5 s at most)
    assert len(calls) <= seen + 1 and not probe.passed.is_set()
