"""What a hook's stdin still has to take, written as the pipe takes it: bytes, or pieces
taken one at a time (a payload written out as it goes: http/jsonstream.py), so that
memory holds one piece of it, never all of it (invariant 6)."""

from __future__ import annotations

import os
from collections.abc import Iterable

Stdin = bytes | Iterable[bytes] | None  # what a hook reads: all at once, or in pieces


class Feed:
    """What a hook's stdin still has to take: bytes, or pieces taken one at a time (a
    payload written out as the pipe takes it: http/jsonstream.py)."""

    def __init__(self, stdin: Stdin) -> None:
        self.pieces = iter((stdin,) if isinstance(stdin, bytes) else stdin or ())
        self.pending = memoryview(b"")
        self._next()

    def _next(self) -> None:
        while not self.pending:
            piece = next(self.pieces, None)
            if piece is None:
                return
            self.pending = memoryview(piece)

    def write(self, fd: int) -> int | None:
        """Write what the pipe takes; None once all is written (or the hook stopped
        reading): the caller closes the pipe, so a hook that reads stdin to the end
        never waits."""
        try:
            self.pending = self.pending[os.write(fd, self.pending[:65536]) :]
            self._next()
        except BrokenPipeError:
            self.pending = memoryview(b"")
        if self.pending:
            return fd
        self.close()
        return None

    def close(self) -> None:
        """No more is taken: what the pieces held is let go (a file they read)."""
        self.pending = memoryview(b"")
        close = getattr(self.pieces, "close", None)
        if close is not None:
            close()


def discard(stdin: Stdin) -> None:
    """Pieces that will never be taken (the hook did not start): let go."""
    close = getattr(stdin, "close", None)
    if close is not None and not isinstance(stdin, bytes):
        close()
