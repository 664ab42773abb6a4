"""The probe port (``--health-port``) from outside, as anyone on the pod's network sees it:
initd booted with one (a free port, another if someone took it first: two suites share
a host), raw requests, and a flood of hostile connections (flood.py) in a process of
its own."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from tests.support.harness import Initd, free_port, wait_for

FLOOD = [sys.executable, str(Path(__file__).resolve().parent / "flood.py")]


def send_raw(port: int, raw: bytes, timeout: float = 10) -> bytes:
    """``raw`` sent (then our side shut), and whatever comes back until the server
    closes: b"" when it closed without an answer."""
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        try:
            conn.sendall(raw)
            conn.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # answered (and closed) before it all went: what came back is read
        try:
            while chunk := conn.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    return answer


def get(port: int, path: str = "/healthz", timeout: float = 5) -> tuple[int, dict[str, Any]]:
    """(status, body) of ``GET path``; (0, {}) when there was no whole answer."""
    try:
        raw = send_raw(port, f"GET {path} HTTP/1.1\r\nHost: probe\r\n\r\n".encode(),
                       timeout)
        head, _, body = raw.partition(b"\r\n\r\n")
        return int(head.split(b" ", 2)[1]), json.loads(body)
    except (OSError, ValueError, IndexError):
        return 0, {}


def listens(init: Initd, port: int) -> bool:
    """Is it this initd's supervisor that listens on ``port``? (Until ours has bound it,
    or found it taken, another suite's initd may be the one answering there.)"""
    try:
        supervisor = psutil.Process(init.init_pid).children()[0]
        return any(conn.status == psutil.CONN_LISTEN and conn.laddr.port == port
                   for conn in supervisor.net_connections(kind="tcp"))
    except (IndexError, psutil.Error):
        return False


def boot_with_probes(start: Callable[[int], Initd], timeout: float = 60) -> tuple[Initd, int]:
    """``start(port)`` until an initd serves /healthz there: a port free when we looked
    may be taken by the time initd binds it (then initd exits 125 saying so: another)."""
    for _ in range(5):
        port = free_port()
        init = start(port)
        wait_for(lambda: init.proc.poll() is not None  # noqa: B023
                 or (listens(init, port) and get(port)[0] == 200),  # noqa: B023
                 timeout=timeout, what="/healthz on the probe port")
        if init.proc.poll() is None:
            return init, port
        if f"cannot serve probes on port {port}" not in init.stderr:
            raise AssertionError(f"initd ended: {init.stderr[-3000:]}")
    raise AssertionError("no free port for the probes in 5 tries")


@contextmanager
def flood(port: int, held: int, garbage: int = 0) -> Iterator[subprocess.Popen[str]]:
    """flood.py against ``port`` while the block runs; its counts are its last line."""
    proc = subprocess.Popen([*FLOOD, "127.0.0.1", str(port), str(held), str(garbage)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "flooding"
        yield proc
    finally:
        assert proc.stdin is not None
        proc.stdin.close()  # its signal to end
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
