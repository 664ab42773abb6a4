"""A real `initd service` on a real Unix socket, and an HTTP client for it."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
from typing import Any


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float = 60) -> None:
        super().__init__("initd", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def call(sock: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    conn = UnixHTTPConnection(sock)
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data,
                     headers={"Content-Type": "application/json"} if data else {})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def start(sock: str, workspace: str, session: str, *more: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "initd", "service", "--socket", sock,
                             "--workspace", workspace, "--session-id", session,
                             "--hooks-dir", f"{workspace}/no-image", *more],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("ready"), line
    return proc
