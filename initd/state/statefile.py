"""A JSON state file that several processes change (ARCHITECTURE.md, invariant 5): every
read-modify-write holds an ``flock`` on a lock file beside it, and every write goes to a
new temp file in the same directory, is fsynced and renamed over the old one, so a
reader or a crash sees the old file or the new one, never half of one.

Its directory may be the agent's (``~/.discobot``), so every step goes through agentfs:
no link is followed, the file read must be a regular file of the owner's and at most
``limit`` bytes, and parsing it can neither recurse without end nor raise anything but
"this is not our data" (invariant 8). A regular file of the owner's that is not our data
is kept aside as ``<name>.corrupt`` for a person to look at; anything else there (a link,
a FIFO, a hard link to another's file, a huge file) is unlinked. Both read as empty.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from initd.config import paths
from initd.state.agentfs import Dir, Place, Unsafe

Data = dict[str, Any]
LIMIT = 2**20  # a state file of initd's is a few KiB; past this it is not ours
LOCK_WAIT = 10.0  # seconds; writers hold the lock for milliseconds
# Set once this process is stopping (the supervisor, on the stop signal): a lock held by
# someone else is then waited for STOPPING_WAIT at most (a writer's milliseconds). The
# lock file may be the agent's, and the stop must take no longer than the children's
# grace, whatever the agent holds.
STOPPING = threading.Event()
STOPPING_WAIT = 0.1


def root(home: str, state_dir: str | None, owner: tuple[int, int] | None = None) -> Place:
    """Where initd keeps its state: --state-dir/INITD_STATE_DIR (the operator's: a volume,
    trusted as named), else the agent's ``~/.discobot`` (walked from its home, never
    through a link)."""
    if state_dir:
        return Place.named(state_dir, owner)
    return Place(home, (paths.STATE,), owner)


class StateFile:
    def __init__(self, place: Place, name: str, empty: Callable[[], Data],
                 limit: int = LIMIT) -> None:
        self.place = place
        self.name = name
        self.empty = empty  # what a missing (or unreadable) file means
        self.limit = limit
        self.lock_name = f".{name}.lock"

    @classmethod
    def at(cls, path: str, empty: Callable[[], Data], owner: tuple[int, int] | None = None,
           limit: int = LIMIT) -> StateFile:
        """A state file in a directory of root's (or the caller's own)."""
        return cls(Place(os.path.dirname(path) or ".", owner=owner),
                   os.path.basename(path), empty, limit)

    @property
    def path(self) -> str:
        return os.path.join(self.place.path, self.name)

    def read(self) -> Data:
        """The current data (empty when there is none)."""
        try:
            with self.place.open() as directory:
                return self._read(directory)
        except FileNotFoundError:
            return self.empty()

    def update(self, change: Callable[[Data], object],
               clean: Callable[[Data], Data] | None = None) -> Data:
        """Read, ``clean`` (make what was read fit the schema), change, write: under an
        exclusive lock, atomically. Returns the data as written."""
        with self.place.open(create=True) as directory:
            fd = directory.lock(self.lock_name)
            try:
                self._lock(fd)
                data = self._read(directory)
                if clean is not None:
                    data = clean(data)
                change(data)
                self._write(directory, data)
                return data
            finally:
                os.close(fd)  # closing drops the lock

    def _lock(self, fd: int) -> None:
        """The exclusive lock (``lock``): the lock file may be the agent's, and a process
        of the agent's holding it for good must not wedge root's writer (a background
        hook, a devcontainer stage) or its shutdown (invariant 8). A writer that gives up
        writes nothing and says why; the next one tries again."""
        where = os.path.join(self.place.path, self.lock_name)
        lock(fd, LOCK_WAIT, lambda why: f"{where}: held by another process ({why}): not "
                                        "written")

    def write(self, data: Data) -> None:
        """Replace the file (call under the lock, or for a file only one process writes)."""
        with self.place.open(create=True) as directory:
            self._write(directory, data)

    def _read(self, directory: Dir) -> Data:
        try:
            raw = directory.read(self.name, self.limit)
        except Unsafe:
            # A link, a FIFO, someone else's file (a hard link to a root file), too big:
            # not ours, and nothing a person needs kept: the name goes, never its target.
            directory.remove(self.name)
            return self.empty()
        if raw is None:
            return self.empty()
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            try:
                directory.rename(self.name, self.name + ".corrupt")
            except OSError:
                pass  # someone else moved it first; empty is still the answer
            return self.empty()
        return data

    def _write(self, directory: Dir, data: Data) -> None:
        # Compact, one write: json.dump with indent runs the pure-Python encoder,
        # several milliseconds per update once a file holds a few dozen entries.
        directory.write(self.name, (json.dumps(data) + "\n").encode())


def lock(fd: int, wait: float, say: Callable[[str], str]) -> None:
    """An exclusive ``flock`` of ``fd``, waited for at most ``wait`` seconds, and for at most
    STOPPING_WAIT more once initd is stopping (a holder never delays the stop); then
    Unsafe(EAGAIN) with ``say(why)``: "for over 10s", or "initd is stopping"."""
    deadline = time.monotonic() + wait
    stopping = False
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            now = time.monotonic()
            if STOPPING.is_set() and not stopping:
                stopping, deadline = True, min(deadline, now + STOPPING_WAIT)
            if now >= deadline:
                why = "initd is stopping" if stopping else f"for over {wait:g}s"
                raise Unsafe(errno.EAGAIN, say(why)) from None
            if stopping:
                time.sleep(pause)
            else:
                STOPPING.wait(pause)  # (wakes at once when the stop begins)
            pause = min(pause * 2, 0.02)
