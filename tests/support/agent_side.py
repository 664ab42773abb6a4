"""What attack scripts use, running as the agent inside initd (tests/security): find
initd's processes in /proc, as any user can, steal a file descriptor of a process of
its own uid (pidfd_getfd, as ptrace allows), talk to the control API."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import time
from typing import Any

from initd.commands import client
from initd.errors import InitdError

PIDFD_GETFD = 438  # x86_64 and arm64 alike


def call(method: str, path: str, body: Any = None, timeout: float = 60) -> tuple[int, Any]:
    return client.call(method, path, body, sock=os.environ["INITD_SOCKET"], timeout=timeout)


def service_pid(timeout: float = 20, not_pid: int | None = None) -> int:
    """The hook service's pid, as /v1/health reports it (another than ``not_pid``)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            code, health = call("GET", "/v1/health", timeout=2)
            pid = health["service"]["pid"]
            if code == 200 and pid != not_pid:
                return int(pid)
        except (OSError, InitdError, KeyError, TypeError, ValueError):
            pass  # (InitdError: say, the service killed in the middle of its answer)
        if time.monotonic() > deadline:
            raise SystemExit("no hook service answered")
        time.sleep(0.05)


def ready(timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if call("GET", "/v1/ready", timeout=2)[0] == 200:
                return True
        except (OSError, InitdError):
            pass
        time.sleep(0.05)
    return False


def start_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[19])


def cpu_seconds(pid: int | str = "self") -> float:
    """The CPU a process has used so far (its utime and stime), as any user may read it."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop(pid: int, timeout: float = 20) -> None:
    """SIGSTOP ``pid``, and wait until each of its threads is stopped: a thread still
    blocked in a read when the signal came would otherwise take what arrives next."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + timeout
    while True:
        states = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                    states.append(f.read().rsplit(b")", 1)[1].split()[0])
            except FileNotFoundError:
                continue  # (a thread gone meanwhile)
        if all(state in (b"T", b"t") for state in states):
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"{pid} did not stop")
        time.sleep(0.005)


def steal_fd(pid: int, fd: int) -> int:
    """A copy of ``pid``'s descriptor ``fd`` in this process."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        stolen = libc.syscall(PIDFD_GETFD, pidfd, fd, 0)
    finally:
        os.close(pidfd)
    if stolen < 0:
        raise OSError(ctypes.get_errno(), "pidfd_getfd")
    return int(stolen)


def channel_of(pid: int) -> socket.socket:
    """The hook service's end of its private channel to the root supervisor."""
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        argv = f.read().split(b"\0")
    fd = int(argv[argv.index(b"--channel-fd") + 1])
    return socket.socket(fileno=steal_fd(pid, fd))
