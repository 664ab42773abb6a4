"""Request bodies past SPOOL_AT kept in a file, not in memory: the hook service takes an
event's payload up to 16 MiB (a Write's whole file), and holding those as they came, then
as the app's copies, made its memory grow with what the agent sent. A body past SPOOL_AT
goes, as it arrives, to a file no name leads to (agentfs.unnamed: O_TMPFILE in the
service's own state directory, the agent's, never root's), which the app then reads
(``wsgi.input``) and a hook's stdin may be copied from; it is gone with its descriptor,
so a crash leaves nothing behind. What the files hold at once is bounded (MAX_SPOOLED); a
body that finds no room, or that cannot be written (a full disk, a directory the agent
made unusable), is read to its end and dropped, and the request answered 503 (try
again): never taken in part, never kept in memory instead."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from initd.state.agentfs import Place

SPOOL_AT = 64 * 1024  # bytes of a body kept in memory; a longer one goes to a file
MAX_SPOOLED = 64 * 2**20  # of the spooled bodies at once: arriving, queued, at work
NO_ROOM = "too many large requests at once; try again"
# The long strings read from the bodies still open, by id: (the string, where its
# literal is in the body's file, the body). A hook's stdin copies them from there.
_PLACES: dict[int, tuple[str, int, int, Body]] = {}
_PLACES_LOCK = threading.Lock()  # (a worker keeps and closes, hooks' feeds look)


class Spool:
    """Where a server's large bodies go: files in ``place``, MAX_SPOOLED bytes at most."""

    def __init__(self, place: Place, limit: int = MAX_SPOOLED) -> None:
        self.place = place
        self.limit = limit
        self.used = 0  # bytes of the bodies taken and not closed
        self._lock = threading.Lock()  # (the reading thread takes, workers close)

    def take(self, size: int) -> Body:
        """A file for a body of ``size`` bytes, counted until the body is closed; or a
        body that drops what comes and says why it was not kept."""
        with self._lock:
            if self.used + size > self.limit:
                return Body(self, size, why=NO_ROOM)
            self.used += size
        from initd.state import agentfs

        try:
            with self.place.open(create=True) as where:
                fd = agentfs.unnamed(where)
        except (OSError, ValueError) as err:  # (Unsafe: a link or a FIFO planted there)
            self._give_back(size)
            return Body(self, size, why=f"the request's body could not be kept in "
                                        f"{self.place.path}: {err}; try again")
        return Body(self, size, fd)

    def _give_back(self, size: int) -> None:
        with self._lock:
            self.used -= size


class Body:
    """One request's body in its file: written as it arrives (the server's reading
    thread), then read by the app (``wsgi.input``: read, and ``fileno`` and ``size`` for
    a reader of its own), closed once the request is answered."""

    def __init__(self, spool: Spool, size: int, fd: int = -1, why: str | None = None
                 ) -> None:
        self.spool = spool
        self.size = size  # its Content-Length
        self.received = 0  # bytes that came: written, or dropped once it is not kept
        self.why = why  # why it is not kept (then nothing more is written)
        self._fd = fd
        self._at = 0  # where read() goes on from
        self._closed = fd < 0
        self._kept: list[int] = []  # its places in _PLACES

    def add(self, data: bytes | bytearray | memoryview) -> int:
        """What came of the body (past its end, nothing is taken): written to its file,
        or dropped once it is not kept. Returns the bytes taken."""
        view = memoryview(data)[: self.size - self.received]
        taken = len(view)
        self.received += taken
        while self.why is None and view:
            try:
                view = view[os.write(self._fd, view):]
            except OSError as err:  # ENOSPC, EDQUOT, EIO: this request's, said
                self.why = (f"the request's body could not be kept: {err.strerror or err}"
                            "; try again")
        return taken

    @property
    def whole(self) -> bool:
        return self.received >= self.size

    def fileno(self) -> int:
        return self._fd

    def read(self, size: int = -1) -> bytes:
        """The body from where the last read ended (WSGI's ``wsgi.input.read``)."""
        left = self.size - self._at
        data = os.pread(self._fd, left if size < 0 else min(size, left), self._at)
        self._at += len(data)
        return data

    def keep(self, places: dict[int, tuple[str, int, int]]) -> None:
        """Where the long strings read from it are in its file (jsonbody.Read.places):
        until it is closed, a hook's stdin copies them from there (``opened``)."""
        with _PLACES_LOCK:
            for key, (text, start, end) in places.items():
                _PLACES[key] = (text, start, end, self)
                self._kept.append(key)

    def close(self) -> None:
        """Its file goes (no name led to it) and its room is given back; once."""
        with _PLACES_LOCK:
            for key in self._kept:
                _PLACES.pop(key, None)
            self._kept.clear()
            if self._closed:
                return
            self._closed = True
        os.close(self._fd)
        self.spool._give_back(self.size)


def opened(text: str) -> tuple[int, int, int] | None:
    """Where a long string read from a body still open is, as JSON, the client's own
    bytes: (a descriptor of its file, the caller's to close; where its literal starts
    and ends, quotes included); None if it is no such string (or no descriptor can be
    had: it is then encoded instead)."""
    with _PLACES_LOCK:
        found = _PLACES.get(id(text))
        if found is None or found[0] is not text:
            return None
        try:
            return os.dup(found[3].fileno()), found[1], found[2]
        except OSError:
            return None
