"""A real `initd service` on a real Unix socket, and an HTTP client for it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from typing import Any

import psutil

from initd.commands import client
from tests.support.harness import wait_for

INITD = [sys.executable, "-m", "initd"]


def call(sock: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    return client.call(method, path, body, sock=sock, timeout=60)


def post(sock: str, path: str, body: bytes, timeout: float = 60) -> tuple[int, Any]:
    """Raw bytes as the body: the whole request, then the whole answer (never a reset: a
    test fails on one), with no client of initd's between (its checks, its resends)."""
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(timeout)
        conn.connect(sock)
        conn.sendall(f"POST {path} HTTP/1.0\r\nContent-Length: {len(body)}\r\n\r\n"
                     .encode() + body)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, payload = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), json.loads(payload)


def start(sock: str, workspace: str, session: str, *more: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "initd", "service", "--socket", sock,
                             "--workspace", workspace, "--session-id", session,
                             "--hooks-dir", f"{workspace}/no-image", *more],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("ready"), line
    return proc


def verb(*args: str, sock: str) -> subprocess.CompletedProcess[str]:
    """``initd VERB …`` from a shell, against the service at ``sock``."""
    return subprocess.run([*INITD, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "INITD_SOCKET": sock})


def args(p: psutil.Process) -> list[str]:
    """Its command line; [] once it exited (a zombie has none: psutil raises)."""
    try:
        return p.cmdline()
    except psutil.Error:  # exited (or a zombie) while we looked
        return []


def is_service(p: psutil.Process) -> bool:
    return "service" in args(p)


def service_process(init) -> psutil.Process:  # type: ignore[no-untyped-def]
    return wait_for(lambda: next((p for p in init.descendants() if is_service(p)), None),
                    what="hook service")
