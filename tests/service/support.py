"""A real `initd service` on a real Unix socket, and an HTTP client for it."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import psutil

from initd.commands import client
from tests.support.harness import wait_for

INITD = [sys.executable, "-m", "initd"]


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
