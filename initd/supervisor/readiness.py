"""Is the agent ready? Its port answers (``--ready-port``), or its URL does (``--ready-url``).

A check runs in a thread of its own, so the supervisor's loop never waits on a network
call; when it passes, the probe's pipe becomes readable and the loop wakes up. As with a
Kubernetes probe, an HTTP answer from 200 to 399 means ready.

A probe starts right after the agent, when its CPU counts most (on a busy node, every
millisecond the supervisor spends is one the agent's start waits for): a port is tried
with ``socket`` alone; a URL pays for what it needs (``urllib``).
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from typing import TYPE_CHECKING

from initd.errors import InitdError

if TYPE_CHECKING:
    from collections.abc import Callable

    from initd.process.users import Account

    Check = Callable[[], bool]
FIRST_INTERVAL = 0.05  # doubling to MAX_INTERVAL: a fast agent is seen ready at once
MAX_INTERVAL = 0.5
ATTEMPT_TIMEOUT = 1.0
EXEC_TIMEOUT = 10.0  # seconds an exec probe may take (its group killed then: not ready)


def port_check(port: int) -> Check:
    """A TCP connection to the port on loopback (IPv4, then IPv6: Node's "localhost" may
    be ::1 only) is accepted."""
    def check() -> bool:
        for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            try:
                probe = socket.socket(family, socket.SOCK_STREAM)
            except OSError:  # (no IPv6 in this network namespace)
                continue
            try:
                probe.settimeout(ATTEMPT_TIMEOUT)
                probe.connect((host, port))
                return True
            except OSError:
                continue
            finally:
                probe.close()
        return False
    return check


def url_check(url: str) -> Check:
    """A GET of ``url`` answers 200-399."""
    import http.client  # only an agent with --ready-url pays for them
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

    def check() -> bool:
        conn = kind(parts.hostname or "localhost", parts.port, timeout=ATTEMPT_TIMEOUT)
        try:
            conn.request("GET", target, headers={"User-Agent": "initd-readiness"})
            return 200 <= conn.getresponse().status < 400
        except (OSError, http.client.HTTPException):
            return False
        finally:
            conn.close()
    return check


def exec_check(argv: tuple[str, ...], account: Account | None) -> Check:
    """``argv`` exits 0 within EXEC_TIMEOUT, run as ``account`` (a service's own user:
    root runs no probe of a service's as root unless the service is root's), in a group
    of its own, killed with it at the timeout."""
    from initd.process import spawn

    def check() -> bool:
        try:
            child = spawn.spawn(spawn.Spec(argv=argv, env=spawn.environment(
                {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, account), cwd="/",
                account=account, stdout=spawn.DEVNULL, stderr=spawn.DEVNULL))
        except (spawn.ExecFailed, OSError, InitdError):
            return False
        code = child.wait(EXEC_TIMEOUT)
        if code is None:
            child.signal_group(signal.SIGKILL)
            child.wait(None)
        return code == 0
    return check


class Probe:
    """Runs ``check`` until it passes or the probe is cancelled."""

    def __init__(self, check: Check) -> None:
        self.passed = threading.Event()
        self._cancelled = threading.Event()
        self._read_fd, self._write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        try:  # (a daemon: it never holds the supervisor's exit)
            threading.Thread(target=self._run, args=(check,), daemon=True,
                             name="readiness").start()
        except RuntimeError:  # no thread (a pids limit): the caller decides, said once
            os.close(self._read_fd)
            os.close(self._write_fd)
            raise

    def fileno(self) -> int:
        """Readable once the check has passed."""
        return self._read_fd

    def _run(self, check: Check) -> None:
        interval = FIRST_INTERVAL
        try:
            while not self._cancelled.is_set():
                if check():
                    self.passed.set()
                    try:
                        os.write(self._write_fd, b"!")
                    except OSError:
                        pass  # cancelled meanwhile: nobody reads any more
                    return
                if self._cancelled.wait(interval):
                    return
                interval = min(interval * 2, MAX_INTERVAL)
        finally:
            # This thread owns the write end: closed here, never under its feet, so the
            # fd number cannot be reused for another file while it might still write.
            os.close(self._write_fd)

    def cancel(self) -> None:
        """Stop probing (the thread may still finish the attempt under way)."""
        self._cancelled.set()
        if self._read_fd >= 0:
            os.close(self._read_fd)
            self._read_fd = -1
