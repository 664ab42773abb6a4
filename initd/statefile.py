"""A JSON state file that several processes change (DESIGN.md invariant 5): every
read-modify-write holds an ``flock`` on a lock file beside it, and every write goes to a
unique temp file in the same directory, is fsynced and renamed over the old one, so a
reader or a crash sees the old file or the new one, never half of one."""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable
from typing import Any

Data = dict[str, Any]


class StateFile:
    def __init__(self, path: str, empty: Callable[[], Data],
                 owner: tuple[int, int] | None = None) -> None:
        self.path = path
        self.directory = os.path.dirname(path)
        self.empty = empty  # what a missing (or unreadable) file means
        self.owner = owner  # (uid, gid) the file and its lock belong to
        self.lock_path = os.path.join(self.directory, f".{os.path.basename(path)}.lock")

    def read(self) -> Data:
        """The current data; a file that is not a JSON object is kept aside as
        ``<name>.corrupt`` for a person to look at, and read as empty."""
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            return self.empty()
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict):
            try:
                os.replace(self.path, self.path + ".corrupt")
            except OSError:
                pass  # someone else moved it first; empty is still the answer
            return self.empty()
        return data

    def update(self, change: Callable[[Data], object],
               read: Callable[[], Data] | None = None) -> Data:
        """Read (``read``, default ``self.read``), change, write: under an exclusive
        lock, atomically. Returns the data as written."""
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o660)
        try:
            if self.owner is not None:
                os.fchown(fd, *self.owner)
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = (read or self.read)()
            change(data)
            self.write(data)
            return data
        finally:
            os.close(fd)  # closing drops the lock

    def write(self, data: Data) -> None:
        """Replace the file (call under the lock, or for a file only one process writes)."""
        name = os.path.basename(self.path)
        tmp = os.path.join(self.directory, f".{name}.{os.getpid()}.{time.monotonic_ns()}")
        try:
            # Compact, one write: json.dump with indent runs the pure-Python encoder,
            # several milliseconds per update once a file holds a few dozen entries.
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(json.dumps(data) + "\n")
                f.flush()
                os.fsync(f.fileno())
            if self.owner is not None:
                os.chown(tmp, *self.owner)
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
