"""A real `initd service` on a real Unix socket, and an HTTP client for it."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from initd.service import client


def call(sock: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    return client.call(method, path, body, sock=sock, timeout=60)


def start(sock: str, workspace: str, session: str, *more: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "initd", "service", "--socket", sock,
                             "--workspace", workspace, "--session-id", session,
                             "--hooks-dir", f"{workspace}/no-image", *more],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("ready"), line
    return proc
