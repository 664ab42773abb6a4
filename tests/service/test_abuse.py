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

from initd.service import app, server
from tests.hooks.support import forget_session, git_repo
from tests.service.support import call, start
from tests.support.harness import wait_for

RELEASE = threading.Event()


def hello(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    if environ["PATH_INFO"] == "/slow":  # busy until the test says
        RELEASE.wait(30)
    start_response("200 OK", [("Content-Length", "2")])
    return [b"ok"]


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, server.UnixWSGIServer]]:
    """A server with a 0.5 s read timeout and room for 4 connections."""
    monkeypatch.setattr(server._Handler, "timeout", 0.5)
    monkeypatch.setattr(server, "MAX_CONNECTIONS", 4)
    where = tempfile.mkdtemp(prefix="initd-abuse-")
    path = f"{where}/s.sock"
    httpd = server.UnixWSGIServer(server.bind(path), hello)
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


def test_an_idle_or_slowloris_connection_is_dropped(tiny, capfd) -> None:  # type: ignore[no-untyped-def]
    path, httpd = tiny
    idle, slow = connect(path), connect(path)
    slow.sendall(b"GET / HT")  # ... and nothing more
    assert idle.recv(10) == b"" and slow.recv(10) == b""  # closed by the service
    wait_for(lambda: httpd._open == 0, what="their threads to end")
    assert "Traceback" not in capfd.readouterr().err


def test_at_the_cap_the_oldest_silent_connection_makes_room(tiny) -> None:  # type: ignore[no-untyped-def]
    """Idle connections fill every place: a client that sends its request is served,
    and the one silent longest is dropped for it."""
    path, httpd = tiny
    held = []
    for n in range(4):
        held.append(connect(path))
        wait_for(lambda: httpd._open == n + 1, what="one more held")  # noqa: B023
    assert get(path).startswith(b"HTTP/1.0 200")
    assert held[0].recv(10) == b""  # the oldest: dropped
    held[1].sendall(b"GET / HTTP/1.0\r\n\r\n")  # the others: still there
    assert held[1].recv(100).startswith(b"HTTP/1.0 200")
    for s in held:
        s.close()
    wait_for(lambda: httpd._open == 0, what="the held ones to end")


def test_when_every_connection_is_busy_a_new_one_is_closed(tiny) -> None:  # type: ignore[no-untyped-def]
    path, httpd = tiny
    RELEASE.clear()
    answers: list[bytes] = []
    busy = [threading.Thread(target=lambda: answers.append(get(path, "/slow")))
            for _ in range(4)]
    for thread in busy:
        thread.start()
    wait_for(lambda: httpd._open == 4 and not httpd._sending, what="four busy requests")
    with connect(path) as fifth:
        assert fifth.recv(10) == b""  # closed at once: no thread for it
    RELEASE.set()
    for thread in busy:
        thread.join(10)
    assert len(answers) == 4 and all(a.startswith(b"HTTP/1.0 200") for a in answers)


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
                 for _ in range(app.MAX_BUSY + 4)]
        for thread in fired:
            thread.start()
        waiting = lambda: subprocess.run(  # noqa: E731
            ["pgrep", "-c", "-f", str(hook)], capture_output=True, text=True).stdout.strip()
        wait_for(lambda: waiting() == str(app.MAX_BUSY), what="every slot busy")
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
