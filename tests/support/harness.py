"""Run the real initd the way a container runtime would, and watch it from outside.

``Initd(args)`` starts ``python -m initd ARGS`` as PID 1 of a new PID namespace
(``unshare --pid --fork --mount-proc --kill-child``) or, with ``pidns=False``, as a plain
child of the test (initd then runs as a child subreaper). The ``unshare`` process ignores
TERM and forwards nothing, so signals go to the namespace's PID 1 directly. With
``netns=True`` it has a network namespace of its own as well (``in_netns`` runs a
command there).
"""

from __future__ import annotations

import atexit
import itertools
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import psutil

SUPPORT = Path(__file__).resolve().parent
PRINT_SIGNALS = [sys.executable, str(SUPPORT / "print_signals.py")]
UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGKILL"]
# With netns: a network namespace of its own too, its loopback up (netns.py says why)
UNSHARE_NET = [UNSHARE[0], "--net", *UNSHARE[1:], sys.executable, str(SUPPORT / "netns.py")]
# Every initd a test starts gets a socket of its own: a test must never touch the real
# /run/initd/initd.sock (in a dev container, the one initd as PID 1 is serving).
SOCKETS = tempfile.mkdtemp(prefix="initd-tests-")
os.chmod(SOCKETS, 0o755)  # a dropped agent (tests/security) connects to its initd's socket
atexit.register(shutil.rmtree, SOCKETS, ignore_errors=True)
_numbers = itertools.count()


class Initd:
    def __init__(self, args: Sequence[str], *, pidns: bool = True,
                 env: dict[str, str] | None = None, cwd: str = "/tmp",
                 preexec_fn: Callable[[], None] | None = None, netns: bool = False) -> None:
        self.pidns = pidns
        self.code: int | None = None
        prefix = (UNSHARE_NET if netns else UNSHARE) if pidns else []
        self.started = time.monotonic()
        env = dict(env if env is not None else _clean_env())
        self.socket = env.setdefault("INITD_SOCKET", own_socket())
        self.proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", "initd", *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, cwd=cwd, preexec_fn=preexec_fn,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.stdout_lines: list[str] = []
        self._stderr: list[bytes] = []
        self._stdout_thread = threading.Thread(target=self._read_stdout, daemon=True)
        self._stdout_thread.start()
        self._stderr_thread = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_thread.start()
        self.args = [*prefix, "initd", *args]
        # (imported here: conftest imports this module before pytest loads the plugin)
        from tests.support import logtails

        logtails.started(self.describe)

    def describe(self) -> str:
        """What a failed test shows of this initd: its command, exit code and log tail."""
        from tests.support import logtails

        code = self.proc.poll()
        out = "\n".join(self.stdout_lines[-40:])
        return "\n".join([f"$ {logtails.command(self.args)[:500]}",
                          f"  exit {code}" if code is not None else "  still running",
                          f"  stdout (its last 40 lines):\n{logtails.tail(out)}",
                          f"  stderr (its end):\n{logtails.tail(self.stderr)}"])

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            self.stdout_lines.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        self._stderr.extend(self.proc.stderr)

    @property
    def init_pid(self) -> int:
        """The host pid of initd itself (the namespace's PID 1 when pidns)."""
        if not self.pidns:
            return self.proc.pid
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            children = psutil.Process(self.proc.pid).children()
            if children:
                return children[0].pid
            time.sleep(0.01)
        raise AssertionError("unshare never started initd")

    def in_netns(self) -> list[str]:
        """The prefix that runs a command in this initd's network namespace."""
        return ["nsenter", f"--net=/proc/{self.init_pid}/ns/net", "--"]

    def signal(self, sig: int) -> None:
        os.kill(self.init_pid, sig)

    def expect(self, pattern: str, timeout: float = 15) -> re.Match[str]:
        """Wait for a stdout line matching ``pattern`` (never a blind sleep)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = self._lines.get(timeout=max(left, 0.001))
            except queue.Empty:
                line = ""
            if line is None or left <= 0:
                raise AssertionError(f"no line matching {pattern!r}; stdout so far: "
                                     f"{self.stdout_lines[-50:]!r}; stderr (its end): "
                                     f"{self.stderr[-5000:]!r}")
            match = re.search(pattern, line)
            if match:
                return match

    def wait(self, timeout: float = 30) -> int:
        self.code = self.proc.wait(timeout)
        # both readers are done with what it wrote: a test reads stdout_lines next (on a
        # busy host the reader may not have run yet when the process is already gone)
        self._stdout_thread.join(5)
        self._stderr_thread.join(5)
        return self.code

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")

    def descendants(self) -> list[psutil.Process]:
        """initd's live descendants, names already read: psutil caches a name, so a test's
        later p.name() cannot fail for a process that exits in between."""
        found = []
        for process in psutil.Process(self.init_pid).children(recursive=True):
            try:
                process.name()
            except psutil.Error:
                continue  # gone while we looked
            found.append(process)
        return found

    def kill(self) -> None:
        """End it and everything under it: a subreaper's orphans would outlive a plain kill
        (and a leftover `yes | tail` starves the tests that follow)."""
        if self.proc.poll() is not None:
            return
        try:
            tree = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.Error:
            tree = []
        self.proc.kill()
        for process in tree:
            try:
                process.kill()
            except psutil.Error:
                pass  # already gone
        self.proc.wait(10)


def own_socket() -> str:
    """A socket path no other initd of this test run uses."""
    return os.path.join(SOCKETS, f"{next(_numbers)}.sock")


def _clean_env() -> dict[str, str]:
    """The test's environment without any INITD_* a developer may have exported."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("INITD_") and k not in ("AGENT_USER", "WORKSPACE_PATH")}


def run(args: Sequence[str], *, timeout: float = 30, **kwargs: object) -> Initd:
    """Start initd and wait for it to finish."""
    init = Initd(args, **kwargs)  # type: ignore[arg-type]
    init.wait(timeout)
    return init


def free_port() -> int:
    """A TCP port nothing listens on now (never a fixed one: two suites share a host)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_status(pid: int | str, field: str) -> str:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return line.split(":", 1)[1].strip()
    raise KeyError(field)


def ns_pid(pid: int) -> int | None:
    """A process's pid in its own PID namespace (the last of /proc's NSpid): the pid it
    says it has, and that initd as PID 1 sees; None once it is gone."""
    try:
        return int(proc_status(pid, "NSpid").split()[-1])
    except (OSError, KeyError):
        return None


SIGNAL_NAMES = {s.value: s.name for s in signal.Signals}


def wait_for(probe: Callable[[], object], timeout: float = 10, what: str = "condition") -> object:
    """Poll ``probe`` until it returns something truthy; fail loudly after ``timeout``.
    The pause grows from 0.01 s to 0.1 s: a probe may scan /proc, and a long wait on a busy
    host must not become a CPU burner of its own."""
    deadline = time.monotonic() + timeout
    pause = 0.01
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(pause)
        pause = min(pause * 1.5, 0.1)
