"""The control API under abuse from the agent: idle and slowloris connections, more
connections than it will hold, every worker busy. Real sockets and threads; the limits
made small where waiting out the real ones would make the suite slow (the real ones are
measured by make bench: bench/faults.py)."""

from __future__ import annotations

import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from initd.http import server as server
from initd.http import workers
from tests.hooks.support import forget_session, git_repo
from tests.service.support import call, start
from tests.support.harness import wait_for


def hello(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    body = environ["wsgi.input"].read() if environ["PATH_INFO"] == "/echo" else b"ok"
    start_response("200 OK", [("Content-Length", str(len(body)))])
    return [body]


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, server.UnixWSGIServer]]:
    """A server that gives a request 0.5 s and holds 4 connections still sending."""
    monkeypatch.setattr(server, "READ_TIMEOUT", 0.5)
    monkeypatch.setattr(server, "MAX_WAITING", 4)
    where = tempfile.mkdtemp(prefix="initd-abuse-")
    path = f"{where}/s.sock"
    httpd = server.UnixWSGIServer(server.listen(path), hello)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    yield path, httpd
    httpd.shutdown()
    httpd.server_close()


def connect(path: str) -> socket.socket:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    return s


def get(path: str, where: str = "/") -> bytes:
    with connect(path) as s:
        s.sendall(f"GET {where} HTTP/1.0\r\n\r\n".encode())
        return s.recv(100)


@pytest.mark.slow
def test_an_idle_or_slowloris_connection_is_dropped_and_costs_no_thread(tiny, capfd) -> None:  # type: ignore[no-untyped-def]
    path, httpd = tiny
    threads = threading.active_count()
    idle, slow = connect(path), connect(path)
    slow.sendall(b"GET / HT")  # ... and then a byte now and then, never the whole request
    wait_for(lambda: len(httpd._waiting) == 2, what="both held")
    assert threading.active_count() == threads  # a buffer each, not a thread
    slow.sendall(b"T")
    assert idle.recv(10) == b"" and slow.recv(10) == b""  # closed: its time was up
    assert "Traceback" not in capfd.readouterr().err


def test_at_the_cap_the_oldest_silent_connection_makes_room(tiny, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Idle connections fill every place: one more connection is taken, and the one
    silent longest is dropped for it; the newcomer's request is served, and the others
    are still there. (The cap drops, not the read timeout, an hour here: on a busy
    machine 0.5 s passed between two steps and a held connection went for its silence;
    and the newcomer waits to send until it holds a place, since a whole request that
    arrives with its connection is served without one.)"""
    monkeypatch.setattr(server, "READ_TIMEOUT", 3600.0)
    path, httpd = tiny
    held = []
    for n in range(4):
        held.append(connect(path))
        wait_for(lambda: len(httpd._waiting) == n + 1, what="one more held")  # noqa: B023
    newcomer = connect(path)
    assert held[0].recv(10) == b""  # the oldest: dropped for it
    newcomer.sendall(b"GET / HTTP/1.0\r\n\r\n")
    assert newcomer.recv(100).startswith(b"HTTP/1.0 200")
    held[1].sendall(b"GET / HTTP/1.0\r\n\r\n")  # the others: still there
    assert held[1].recv(100).startswith(b"HTTP/1.0 200")
    for s in [*held, newcomer]:
        s.close()


def test_what_requests_still_arriving_may_hold_is_bounded(tiny, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Many connections each sending most of a big request and stalling: past the
    budget, the oldest is dropped (1,024 x 64 KiB would otherwise sit in memory)."""
    path, httpd = tiny
    monkeypatch.setattr(server, "MAX_BUFFERED", 1000)
    first, second = connect(path), connect(path)
    first.sendall(b"GET / HTTP/1.0\r\nX: " + b"a" * 700)
    wait_for(lambda: httpd._buffered > 700, what="the first held")
    second.sendall(b"GET / HTTP/1.0\r\nX: " + b"b" * 700)
    assert first.recv(10) == b""  # dropped for the newer one
    second.sendall(b"\r\n\r\n")
    assert second.recv(100).startswith(b"HTTP/1.0 200")
    for _ in range(3):  # whole requests leave nothing counted behind
        assert get(path).startswith(b"HTTP/1.0 200")
    wait_for(lambda: httpd._buffered == 0 and not httpd._waiting, what="nothing held")


@pytest.mark.parametrize(("request_bytes", "status"), [
    (b"GARBAGE\r\n\r\n", b"400"),
    (b"GET / HTTP/1.0\r\nno colon here\r\n\r\n", b"400"),
    (b"GET / HTTP/1.0\r\nX: " + b"a" * 70000, b"431"),
])
def test_a_request_that_is_not_http_gets_one_answer(tiny, request_bytes: bytes,  # type: ignore[no-untyped-def]
                                                    status: bytes) -> None:
    path, _ = tiny
    with connect(path) as s:
        s.sendall(request_bytes)
        assert s.recv(100).split()[1] == status


def test_a_body_arrives_whole_before_the_app_sees_it(tiny) -> None:  # type: ignore[no-untyped-def]
    path, _ = tiny
    with connect(path) as s:
        s.sendall(b"POST /echo HTTP/1.0\r\nContent-Length: 11\r\n\r\nhello")
        s.sendall(b" world")
        assert s.recv(100).endswith(b"hello world")


def test_probes_and_cancel_never_wait_behind_busy_requests(tmp_path: Path) -> None:
    """Every worker slot held by an event whose hook waits for a file: health, ready
    and a cancel are still answered (they used to queue behind any flood)."""
    repo = git_repo(tmp_path / "ws")
    release = tmp_path / "release"
    hooks = repo / ".discobot" / "hooks"
    hooks.mkdir(parents=True)
    hook = hooks / "10-wait.sh"
    hook.write_text(f"#!/bin/sh\n#---\n# type: pre_tool\n# timeout: 60\n#---\n"
                    f"while [ ! -e {release} ]; do sleep 0.05; done\n")
    hook.chmod(0o755)
    sid, sock = f"abuse-{uuid.uuid4().hex[:8]}", str(tmp_path / "initd.sock")
    service = start(sock, str(repo), sid)
    try:
        fired = [threading.Thread(target=call, args=(sock, "POST", "/v1/events/pre_tool", {}))
                 for _ in range(workers.WORKERS + 4)]
        for thread in fired:
            thread.start()
        waiting = lambda: subprocess.run(  # noqa: E731
            ["pgrep", "-c", "-f", str(hook)], capture_output=True, text=True).stdout.strip()
        wait_for(lambda: waiting() == str(workers.WORKERS), what="every slot busy")
        assert call(sock, "GET", "/v1/health")[0] == 200
        assert call(sock, "GET", "/v1/ready")[0] == 200
        assert call(sock, "POST", "/v1/turn/cancel")[0] == 200
        release.touch()
        for thread in fired:
            thread.join(60)
        assert waiting() == "0"
    finally:
        release.touch()
        service.terminate()
        service.wait(10)
        forget_session(sid)
