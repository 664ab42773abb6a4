"""What a hook printed: a bounded head and tail in memory (invariant 6), and the log file
a session, file or pre-commit hook streams to, capped with a marker and ending with the
output's last KEEP bytes. Chunk by chunk: nothing here costs root per line of output
(a Python call per line of a command that prints millions is seconds of the
supervisor's time); only the first ECHO bytes are cut into lines."""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

KEEP = 32 * 1024  # head and tail kept in memory for messages: 64 KiB at most
LINE_MAX = 4096  # a longer run without a newline is passed on as a line anyway
ECHO = 64 * 1024  # bytes passed on line by line (initd's log, with -v); the rest: the log


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
        if len(rest) >= KEEP:
            self.tail[:] = rest[-KEEP:]
        elif rest:
            self.tail += rest
            del self.tail[: max(0, len(self.tail) - KEEP)]
        self.lines += chunk.count(b"\n")

    def last(self, size: int) -> bytes:
        """The last ``size`` (at most KEEP) bytes of the stream."""
        if size <= 0:
            return b""
        kept = self.tail if self.elided else self.head + self.tail
        return bytes(kept[-size:])

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
    """The log file plus what memory keeps: head, tail, line count, lines for a callback
    (initd's own log: the first ECHO bytes, then one line saying where the rest is). The
    file comes open (the status store makes it, through agentfs: it lives in the agent's
    home) and is closed here; or it could not be made (an OSError: a read-only state
    directory), and memory alone keeps what the result needs.

    Past ``cap`` bytes the log takes no more output until the end (``close``) or initd's
    next remark (``note``): there it gets a marker and the output's last KEEP bytes it
    does not hold yet. A pipe handed to a drain (pipes.py) gives only those last bytes."""

    def __init__(self, file: BinaryIO | OSError, path: str, cap: int,
                 on_line: Callable[[str], None] | None) -> None:
        super().__init__()
        self.path = path
        self.file = None if isinstance(file, OSError) else file
        self.cap = cap
        self.written = 0  # bytes of output in the log (at most cap)
        self.logged = 0  # the log holds the output up to here (the end: after a marker)
        self.dropped = 0
        self.uncounted = False  # a drain read more than it kept: how much, nobody knows
        self.lost = ""  # why a drain ended before the output did (its end is lost)
        self.on_line = on_line
        self.echoed = 0
        self.partial = bytearray()
        # why the log stopped being written (a full disk), or never was
        self.failed = (file.strerror or str(file)) if isinstance(file, OSError) else None

    @property
    def full(self) -> bool:
        """The log takes no more of the output: what comes now only moves the tail."""
        return self.failed is not None or self.written >= self.cap

    def add(self, chunk: bytes) -> None:
        room = self.cap - self.written
        if room > 0 and self.failed is None:
            self._write(chunk[:room])
            self.written += min(room, len(chunk))
            self.logged += min(room, len(chunk))
        self.dropped += max(0, len(chunk) - max(room, 0))
        super().add(chunk)
        if self.on_line is not None and self.echoed < ECHO:
            self._lines(chunk)

    def drained(self, end: bytes, whole: bool) -> None:
        """What a drain read past the cap: all of it (``whole``), or its last bytes."""
        if whole:
            self.add(end)
            return
        self.dropped += len(end)
        self.size += len(end)  # (at least: it read more than it kept)
        self.tail[:] = end[-KEEP:]
        self.uncounted = True

    def drain_lost(self, why: str) -> None:
        """A drain stopped (or killed) before its pipe ended: what it read, its end with
        it, is lost; ``why`` says so in the log."""
        self.lost = why
        self.uncounted = True

    def _lines(self, chunk: bytes) -> None:
        """Lines for the callback, out of the first ECHO bytes (split in C: a chunk of
        short lines costs one call per line, and only ECHO bytes' worth ever do)."""
        assert self.on_line is not None
        part = chunk[: ECHO - self.echoed]
        self.echoed += len(part)
        *whole, rest = (bytes(self.partial) + part).split(b"\n")
        for line in whole:
            self._pass(line)
        while len(rest) > LINE_MAX:
            self._pass(rest[:LINE_MAX])
            rest = rest[LINE_MAX:]
        self.partial[:] = rest
        if self.echoed >= ECHO and len(part) < len(chunk):
            if self.partial:
                self._pass(bytes(self.partial))
                self.partial.clear()
            self.on_line(f"[initd: more output than initd's log shows: see {self.path}]")

    def _pass(self, line: bytes) -> None:
        assert self.on_line is not None
        for at in range(0, max(len(line), 1), LINE_MAX):
            self.on_line(line[at:at + LINE_MAX].decode(errors="replace"))

    def note(self, text: str) -> None:
        """initd's own remark at the end of the log (timeout, truncation, exec error)."""
        self._seal()
        if self.failed is None:
            self._write(text.encode())

    def _seal(self) -> None:
        """The output the log does not hold, past the cap: a marker, then its last bytes
        (at most KEEP): a log holds how the command began and how it ended."""
        missing = self.size - self.logged
        if (missing <= 0 and not self.lost) or self.failed is not None:
            return
        if self.lost:
            self._write(f"\n[initd: output truncated at {self.cap} bytes; what followed is "
                        f"lost, its end too ({self.lost})]\n".encode())
            self.logged, self.lost, self.uncounted = self.size, "", False
            return
        end = self.last(min(missing, KEEP))
        gap = missing - len(end)
        said = f"output truncated at {self.cap} bytes; at least {gap} more bytes dropped" \
            if self.uncounted else f"output truncated at {self.cap} bytes; {gap} more " \
            "bytes dropped" if gap else f"output past {self.cap} bytes"
        self._write(f"\n[initd: {said}; its last {len(end)} bytes follow]\n".encode() + end)
        self.logged = self.size
        self.uncounted = False

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
            self.partial.clear()
        self._seal()
        try:
            if self.file is not None:
                self.file.close()  # (a buffered write may fail only now)
        except OSError as err:
            self.failed = self.failed or err.strerror or str(err)
