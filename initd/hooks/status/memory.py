"""Hook state kept in memory, when the state directory cannot be written."""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import BinaryIO

from initd.hooks.model import Hook
from initd.hooks.status.schema import Status, empty
from initd.hooks.status.store import CLOCK_REALTIME_COARSE, StatusStore
from initd.process.runner import Result
from initd.state.agentfs import Place


class MemoryStore(StatusStore):
    """The store when the state directory cannot be written (a ``--read-only`` root, a
    volume the agent cannot write: ``context.prepare_state`` says why): status.json lives
    in this process's memory for its life, each hook's log is what memory kept of its
    output (head and tail), the changed-files lists go to the temp directory. Turns,
    reruns and pending hooks work as usual; a restart forgets them."""

    def __init__(self, place: Place, reason: str) -> None:
        super().__init__(place)
        self.reason = reason
        self._status = empty()
        self._logs: dict[str, bytes] = {}
        self._marker: int | None = None
        self._next: int | None = None
        self._lists: str | None = None  # a 0700 mkdtemp of this process's, made on demand
        self._lock = threading.Lock()

    def prepare(self) -> None:
        pass

    def read(self) -> Status:
        with self._lock:
            return _copy(self._status)

    def update(self, change: Callable[[Status], object]) -> Status:
        with self._lock:
            change(self._status)
            return _copy(self._status)

    def new_log(self, hook_id: str) -> tuple[BinaryIO, str]:
        raise OSError(errno.EROFS, "not kept: the state directory cannot be written")

    def read_log(self, hook_id: str) -> bytes | None:
        with self._lock:
            if hook_id not in self._logs:
                raise FileNotFoundError(errno.ENOENT, f"no output kept for {hook_id}")
            return self._logs[hook_id]

    def write_list(self, hook_id: str, data: bytes) -> str:
        """In a directory of this process's own (mkdtemp: a random name, 0700), never
        under a name in /tmp that another user could have taken first."""
        if self._lists is None:
            import tempfile

            self._lists = tempfile.mkdtemp(prefix="initd-lists-")
        with Place(self._lists).open() as directory:
            directory.write(f"{hook_id}.files", data, mode=0o600)
        return os.path.join(self._lists, f"{hook_id}.files")

    def new_marker(self) -> None:
        # the file system's own clock: files' mtimes come from the coarse realtime clock,
        # which lags time.time_ns() by up to a tick (a file changed just after would seem
        # older than the marker, and be missed)
        self._next = time.clock_gettime_ns(CLOCK_REALTIME_COARSE)

    def marker_ns(self) -> int | None:
        return self._marker

    def advance_marker(self) -> None:
        self._marker = self._next

    def finished_all(self, runs: Sequence[tuple[Hook, Result]]) -> Status:
        with self._lock:
            for hook, result in runs:
                self._logs[hook.id] = result.output().encode()
        return super().finished_all(runs)


def _copy(status: Status) -> Status:
    """A deep copy (what was read is the caller's to change); json.loads of json.dumps
    is what a read from the file gives, and what a read costs."""
    import json

    return json.loads(json.dumps(status))  # type: ignore[no-any-return]
