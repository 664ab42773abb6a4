"""Invariant 12 at the API: a blockable event whose payload initd cannot take (over the
event limit, nested past the parser's) is answered as blocked, and that answer reaches
the client whole (the body is read to its end first: answered early, the client still
sending had the connection reset, lost the 413, and `initd emit` exited 125, which an
agent's harness reads as "go ahead"). Real services, real sockets, real `initd emit`."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from initd.http import server as httpd
from initd.http import wire, workers
from initd.service.app import EVENT_BODY, MAX_BODY
from tests.hooks.support import forget_session, git_repo
from tests.service.support import post, start

GUARD = '[[agent.hooks]]\nevent = "pre_tool"\ncommand = "echo no >&2; exit 1"\nblock = true\n'
OVER = EVENT_BODY + 1024


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    repo = git_repo(tmp_path / "ws")
    (repo / ".nyzhi").mkdir()
    (repo / ".nyzhi" / "config.toml").write_text(GUARD)
    sid = f"fc-{uuid.uuid4().hex[:8]}"
    sock = str(tmp_path / "initd.sock")
    proc = start(sock, str(repo), sid)
    yield sock
    proc.send_signal(signal.SIGTERM)
    proc.wait(10)
    forget_session(sid)



def big(size: int) -> bytes:
    return json.dumps({"tool_name": "Write", "tool_input": {"content": "x" * size}}).encode()


def test_a_payload_over_the_limit_is_answered_as_blocked(service: str) -> None:
    code, out = post(service, "/v1/events/pre_tool", big(OVER))
    assert code == 200 and out["blocked"], out
    [refused] = out["results"]
    assert refused["status"] == "blocked" and "could not be taken" in refused["error"]
    code, out = post(service, "/v1/events/post_tool", big(OVER))  # not blockable: said
    assert code == 200 and not out["blocked"] and out["results"][0]["status"] == "error"
    code, out = post(service, "/v1/turn", big(MAX_BODY))  # the rest of the API: 413,
    assert code == 413 and "body over" in out["error"]  # delivered all the same


def test_a_payload_within_the_limit_reaches_the_guards(service: str) -> None:
    code, out = post(service, "/v1/events/pre_tool", big(2 * 2**20))  # a 2 MiB Write
    assert code == 200 and out["blocked"] and out["reason"] == "no", out


def test_a_payload_nested_too_deep_is_answered_as_blocked(service: str) -> None:
    body = b'{"tool_input": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    code, out = post(service, "/v1/events/pre_tool", body)
    assert code == 200 and out["blocked"] and "nested too deep" in out["reason"], out


def emit(sock: str, event: str, data: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "initd", "emit", event, "--data", "-"],
                          input=data, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "INITD_SOCKET": sock})


@pytest.mark.slow
def test_emit_exits_2_for_a_blockable_event_it_could_not_put_to_the_hooks(
        service: str) -> None:
    over = emit(service, "pre_tool", big(OVER).decode())
    assert over.returncode == 2 and "could not be taken" in over.stderr, over.stderr
    assert emit(service, "post_tool", big(OVER).decode()).returncode == 0  # (said)
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    nested = emit(service, "pre_tool", deep)
    assert nested.returncode == 2 and "nested too deep" in nested.stderr, nested.stderr
    assert emit(service, "after_turn", deep).returncode == 125  # a usage error, as before
    within = emit(service, "PreToolUse", big(70_000).decode())  # a Write of 70 KB
    assert within.returncode == 2 and "initd: blocked: no" in within.stderr


def test_a_body_over_the_servers_limit_is_read_to_its_end_and_dropped() -> None:
    arriving = wire.Arriving()
    arriving.data += b"POST /v1/events/pre_tool HTTP/1.0\r\nContent-Length: 250\r\n\r\n"
    arriving.data += b"x" * 100
    assert arriving.whole(max_body=64) is None and not arriving.data  # held: nothing
    arriving.data += b"x" * 149
    assert arriving.whole(max_body=64) is None and arriving.skipped == 249
    arriving.data += b"x"
    head_and_body = arriving.whole(max_body=64)
    assert head_and_body is not None and head_and_body[1] == b""  # the app refuses it


def test_what_large_bodies_hold_at_once_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bodies over MAX_BODY queued or at work count against MAX_HELD: past it, 503 (a
    1,024-deep queue of 16 MiB events would otherwise sit in memory)."""
    monkeypatch.setattr(workers, "MAX_HELD", 300_000)
    release, inside = threading.Event(), threading.Event()

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        environ["wsgi.input"].read()
        inside.set()
        release.wait(30)
        start_response("200 OK", [("Content-Length", "2")])
        return [b"ok"]

    path = f"{tempfile.mkdtemp(prefix='initd-held-')}/s.sock"
    server = httpd.UnixWSGIServer(httpd.listen(path), app, max_body=2**20)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    try:
        first = threading.Thread(target=post_raw, args=(path, 200_000), daemon=True)
        first.start()
        assert inside.wait(30)
        assert post_raw(path, 200_000).startswith(b"HTTP/1.0 503")  # 400 KB: no room
    finally:
        release.set()
        first.join(30)
    assert post_raw(path, 200_000).startswith(b"HTTP/1.0 200")  # released: room again
    # a worker gives back what it held once its answer is sent: the client may read the
    # answer first (a deadline on that event, not a bound on time)
    deadline = time.monotonic() + 30
    while server.workers.held and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.workers.held == 0
    server.shutdown()
    server.server_close()


def post_raw(path: str, size: int) -> bytes:
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(60)
        conn.connect(path)
        conn.sendall(f"POST /x HTTP/1.0\r\nContent-Length: {size}\r\n\r\n".encode()
                     + b"x" * size)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer


def test_emit_exits_2_for_a_blockable_event_when_no_service_can_be_asked(
        tmp_path: Path) -> None:
    """No service at the socket (gone, or never started): a blockable event's guards
    were not asked, so it is blocked; any other event is initd's own error, as before."""
    nobody = str(tmp_path / "nobody.sock")
    blocked = emit(nobody, "pre_tool", '{"tool_name": "Bash"}')
    assert blocked.returncode == 2, blocked.stderr
    assert blocked.stderr.startswith("initd: blocked: its hooks could not be asked: ")
    assert emit(nobody, "after_turn", "{}").returncode == 125
