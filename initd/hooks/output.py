"""What a hook printed: a bounded head and tail in memory (invariant 6), and the log file
a session, file or pre-commit hook streams to, capped with a marker."""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

KEEP = 32 * 1024  # head and tail kept in memory for messages: 64 KiB at most
LINE_MAX = 4096  # a longer run without a newline is passed on as a line anyway


class Kept:
    """The first ``head`` and the last KEEP bytes of a stream (KEEP each unless told: an
    event hook's stdout keeps a longer head, its JSON answer: events/answers.py), and how
    many lines it had."""

    def __init__(self, head: int = KEEP) -> None:
        self.head_size = head
        self.head = bytearray()
        self.tail = bytearray()
        self.lines = 0
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        rest = chunk
        if len(self.head) < self.head_size:
            room_in_head = self.head_size - len(self.head)
            self.head += chunk[:room_in_head]
            rest = chunk[room_in_head:]  # the rest of a chunk that fills the head: tail
        if rest:
            self.tail += rest
            del self.tail[: max(0, len(self.tail) - KEEP)]
        self.lines += chunk.count(b"\n")

    @property
    def elided(self) -> bool:
        return self.size > len(self.head) + len(self.tail)

    def text(self, where: str = "") -> str:
        """Head, a marker when something in between was dropped, tail."""
        head = self.head.decode(errors="replace")
        if not self.tail:
            return head
        marker = f"\n[… output elided{', see ' + where if where else ''} …]\n" \
            if self.elided else ""
        return head + marker + self.tail.decode(errors="replace")


class Output(Kept):
    """The log file plus what memory keeps: head, tail, line count, whole lines for a
    callback (initd's own log). The file comes open (the status store makes it, through
    agentfs: it lives in the agent's home) and is closed here; or it could not be made (an
    OSError: a read-only state directory), and memory alone keeps what the result needs."""

    def __init__(self, file: BinaryIO | OSError, path: str, cap: int,
                 on_line: Callable[[str], None] | None) -> None:
        super().__init__()
        self.path = path
        self.file = None if isinstance(file, OSError) else file
        self.cap = cap
        self.written = 0
        self.dropped = 0
        self.on_line = on_line
        self.partial = bytearray()
        # why the log stopped being written (a full disk), or never was
        self.failed = (file.strerror or str(file)) if isinstance(file, OSError) else None

    def add(self, chunk: bytes) -> None:
        room = self.cap - self.written
        if room > 0 and self.failed is None:
            self._write(chunk[:room])
            self.written += min(room, len(chunk))
        self.dropped += max(0, len(chunk) - max(room, 0))
        super().add(chunk)
        if self.on_line is not None:
            self._lines(chunk)

    def _lines(self, chunk: bytes) -> None:
        assert self.on_line is not None
        self.partial += chunk
        while b"\n" in self.partial or len(self.partial) > LINE_MAX:
            cut = self.partial.find(b"\n")
            end, skip = (cut, 1) if 0 <= cut <= LINE_MAX else (LINE_MAX, 0)
            self.on_line(self.partial[:end].decode(errors="replace"))
            del self.partial[: end + skip]

    def note(self, text: str) -> None:
        """initd's own remark at the end of the log (timeout, truncation, exec error)."""
        if self.failed is None:
            self._write(text.encode())

    def _write(self, data: bytes) -> None:
        """To the log; a write that fails (ENOSPC, EIO) stops the log, never the hook's
        supervision: its timeout, its output in memory and its result all go on."""
        if self.file is None:
            return
        try:
            self.file.write(data)
        except OSError as err:
            self.failed = err.strerror or str(err)

    def close(self) -> None:
        if self.partial and self.on_line is not None:
            self.on_line(self.partial.decode(errors="replace"))
        if self.dropped:
            self.note(f"\n[initd: output truncated at {self.cap} bytes; "
                      f"{self.dropped} more bytes dropped]\n")
        try:
            if self.file is not None:
                self.file.close()  # (a buffered write may fail only now)
        except OSError as err:
            self.failed = self.failed or err.strerror or str(err)
