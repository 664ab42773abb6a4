"""A hook service the test kills with -9 and starts again on the same socket (as initd's
supervisor does), and a client that sends each request again, with its key, until it is
answered (as ``initd emit`` and ``initd turn`` do under initd).

The service runs from ``tree`` (PYTHONPATH: the working tree, or a copy of it a test
built), through killpoint.py: a start may name the write it dies at (KILL_AT). It dies
too when a hook kills it (the hooks are the test's: they read ``victim``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from initd.commands import client
from initd.errors import InitdError

KILLPOINT = Path(__file__).resolve().with_name("killpoint.py")
TREE = str(Path(__file__).resolve().parents[2])  # this working tree


class Killable:
    def __init__(self, root: Path, workspace: Path, sid: str, tree: str = TREE) -> None:
        self.root, self.workspace, self.sid, self.tree = root, workspace, sid, tree
        self.sock = str(root / "s.sock")
        self.victim = root / "victim"  # the service's pid, for a hook that kills it
        self.proc: subprocess.Popen[str] | None = None
        self.starts = self.kills = self.sent = 0
        self.log = (root / "service.log").open("a")

    def start(self, kill_at: str | None = None) -> None:
        env = {**os.environ, "PYTHONPATH": self.tree}
        env.pop("KILL_AT", None)
        if kill_at:
            env["KILL_AT"] = kill_at
        self.proc = subprocess.Popen(
            [sys.executable, str(KILLPOINT), "service", "--socket", self.sock,
             "--workspace", str(self.workspace), "--session-id", self.sid,
             "--hooks-dir", str(self.workspace / "no-image")],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.log, text=True,
            env=env, cwd=str(self.root))  # (not the tree's root: -m would import from cwd)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("ready"), f"the service did not start: {line!r}"
        self.victim.write_text(str(self.proc.pid))
        self.starts += 1

    def request(self, path: str, body: Any, key: str | None,
                plan: Callable[[], str | None] = lambda: None,
                limit: int = 20) -> tuple[int, Any, int]:
        """(status, answer, deliveries): sent until answered; each death in between is a
        kill (the process must be gone: else the answer was lost, and the test fails),
        and the service is started again with ``plan()``'s KILL_AT."""
        data = json.dumps(body).encode()
        for delivery in range(1, limit + 1):
            self.sent += 1
            try:
                status, raw = client.raw("POST", path, data, self.sock, 60, key)
            except InitdError as err:
                self._died(err)
                self.start(plan())
                continue
            return status, json.loads(raw or b"null"), delivery
        raise AssertionError(f"{path} {key}: no answer after {limit} deliveries")

    def _died(self, err: Exception) -> None:
        assert self.proc is not None
        try:
            code = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"a lost answer: the service lives, the request got "
                                 f"{err}") from None
        assert code == -9, f"the service ended with {code}, not a kill -9 ({err})"
        self.kills += 1

    def restart(self, kill_at: str | None = None) -> None:
        """Stopped (a kill -9, if it still runs: a plan that did not fire), and started
        again."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        self.start(kill_at)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)
        self.log.close()


def kill_at(arm: str, nth: int, count: str = ".") -> str:
    """KILL_AT for killpoint.py: the ``nth`` write (of a file named by ``count``) counted
    from the first write of a file named ``arm`` (matched whole)."""
    return f"^{re.escape(arm)}$ {count} {nth}"


def wait_until(test: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not test():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.01)
