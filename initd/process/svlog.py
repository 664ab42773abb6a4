"""A service's logger (``initd svlog``): one process per service for initd's whole life,
s6-log's model, run as the service's user, never root (supervisor/servicelog.py starts
it). It reads the service's stdout and stderr from its pipe in large blocks, writes them
to the rotated files (svfiles.py), and passes each line to initd's stderr (inherited) as
a log line of initd's shape carrying ``"service": NAME``: JSON with initd's keys (event,
level, logger, timestamp: pid1/log.py's shape) with ``--json``, else ``NAME | line``.

What the service writes is untrusted, and only this process reads it: a line longer than
LINE_MAX is cut (the rest of it is skipped until its newline, so a 10 MB line without
one costs a bounded buffer), invalid UTF-8 is replaced, JSON escapes every control
character (NUL, ESC), and the console's form shows control characters escaped, so a
service cannot drive the terminal initd's log is shown on. Memory is bounded whatever
the input: a block, a slice of it cut into lines at a time, a partial line.

The service never waits for a log collector: a line goes to stderr only when stderr can
take it at once (poll); one that cannot is counted, and the count said when it can
again (the files have those lines). At the pipe's end (every writer gone), the last
partial line is passed on and the logger exits 0.
"""

from __future__ import annotations

import json
import os
import select

from initd.pid1.log import timestamp
from initd.process.output import LINE_MAX
from initd.process.svfiles import RETRY, Files

READ = 1 << 20  # bytes per read: the pipe's size as root sets it (servicelog.py)
SLICE = 64 * 1024  # bytes cut into lines at once: how many lines memory holds at most
ATOMIC = select.PIPE_BUF  # a write to a pipe this size or less is never split
CUT = " [initd: line cut]"
# what the console form shows escaped: C0 controls but tab, DEL, C1 controls (\x9b is CSI)
ESCAPED = {c: f"\\x{c:02x}" for c in (*range(0x09), *range(0x0a, 0x20), *range(0x7f, 0xa0))}


def run(name: str, directory: str | None, max_bytes: int, backups: int, json_lines: bool,
        stdin: int = 0, stderr: int = 2) -> int:
    """Log the pipe on ``stdin`` until its end; 0 then. ``directory`` None: no files
    (root could not prepare them), the lines alone."""
    echo = Echo(name, json_lines, stderr)
    files = None if directory is None else Files(directory, max_bytes, backups, echo.files)
    while True:
        data = os.read(stdin, READ)
        if not data:
            break
        if files is not None:
            files.write(data)
        for at in range(0, len(data), SLICE):
            echo.feed(data[at:at + SLICE])
    echo.end()
    if files is not None:
        files.close()
    return 0


class Echo:
    """The lines of a service's output, as log lines on initd's stderr (``fd``)."""

    def __init__(self, name: str, json_lines: bool, fd: int = 2) -> None:
        self.name = name
        self.json = json_lines
        self.fd = fd
        self.partial = bytearray()  # the line begun, not ended yet (at most LINE_MAX)
        self.cutting = False  # the line begun was passed on cut: skip to its end
        self.hidden = 0  # lines stderr could not take at once
        self.poller = select.poll()
        self.poller.register(fd, select.POLLOUT)

    def feed(self, data: bytes) -> None:
        """A piece of the output: its whole lines passed on, the rest kept for later."""
        *lines, rest = data.split(b"\n")
        if lines:
            if self.cutting:  # the end of a line already passed on, cut
                del lines[0]
            elif self.partial:
                lines[0] = bytes(self.partial) + lines[0]
            self.partial.clear()
            self.cutting = False
        if not self.cutting and rest:
            if len(self.partial) + len(rest) > LINE_MAX:
                lines.append(bytes(self.partial) + rest[:LINE_MAX + 1])  # (cut, below)
                self.partial.clear()
                self.cutting = True
            else:
                self.partial += rest
        if lines:
            self._send(self._lines(lines))

    def end(self) -> None:
        """The output ended: a line it left unended is passed on."""
        if self.partial and not self.cutting:
            self._send(self._lines([bytes(self.partial)]))
        self.partial.clear()
        if self.hidden:
            self._write(b"", 0)  # (says how many lines were not shown, if it can now)

    def files(self, problem: str | None) -> None:
        """Said once when the log files stop being written (``problem``), once when
        they are again (None)."""
        if problem is None:
            self._note("info", "log files written again", "its log files are written again")
        else:
            self._note("warning", "log files not written",
                       f"its log files are not written ({problem}); its output is "
                       f"still shown here, and the files tried again every {RETRY:g} s",
                       error=problem)

    def _lines(self, lines: list[bytes]) -> list[bytes]:
        """Each line as its log line. In JSON, json.dumps of the line's text between
        what every line of a read shares (its keys, its time: the lines came together),
        made once: the bytes json.dumps of the whole record would make, for a tenth of
        the CPU."""
        texts = [self._text(line) for line in lines]
        if not self.json:
            return [f"{self.name} | {text.translate(ESCAPED)}\n".encode() for text in texts]
        head, tail = self._json("info", "\0").split('"\\u0000"')
        return [(head + json.dumps(text) + tail).encode() for text in texts]

    @staticmethod
    def _text(line: bytes) -> str:
        text = line[:LINE_MAX].removesuffix(b"\r").decode("utf-8", "replace")
        return text + CUT if len(line) > LINE_MAX else text

    def _json(self, level: str, event: str, **fields: object) -> str:
        return json.dumps({"event": event, "level": level, "logger": "output",
                           "timestamp": timestamp(), "service": self.name, **fields}) + "\n"

    def _note(self, level: str, event: str, said: str, **fields: object) -> None:
        line = self._json(level, f"service {event}", **fields) if self.json \
            else f"initd: service {self.name}: {said}\n"
        self._write(line.encode(), 0)

    def _send(self, lines: list[bytes]) -> None:
        """In writes of whole lines, PIPE_BUF bytes or fewer where the lines allow: a
        pipe takes each whole, never mixed with another writer's."""
        batch: list[bytes] = []
        size = 0
        for line in lines:
            if batch and size + len(line) > ATOMIC:
                self._write(b"".join(batch), len(batch))
                batch, size = [], 0
            batch.append(line)
            size += len(line)
        self._write(b"".join(batch), len(batch))

    def _write(self, data: bytes, lines: int) -> None:
        """``data`` (``lines`` lines) to stderr if it can take it now, else counted."""
        if not self.poller.poll(0):
            self.hidden += lines
            return
        if self.hidden:
            hidden, self.hidden = self.hidden, 0
            self._note("warning", "output lines not shown",
                       f"{hidden} lines of its output not shown: initd's stderr was full "
                       "(its log files have them)", lines=hidden)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view):]
        except OSError:
            pass  # stderr closed or failing (a collector gone): the lines, not the logger
