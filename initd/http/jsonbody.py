"""A request's JSON body read from its file (spool.py) at a bounded cost: the body is
never one text in memory. One pass over the file, a piece at a time, finds its strings:
a long one (past LONG bytes) or one with characters past ASCII is decoded on its own
(a long one piece by piece from the file, then joined: twice that string at the moment
of the join, the most this reading ever holds), and leaves a placeholder in the
*shape*, the rest of the body, ASCII, which json.loads then reads. So the payload's
strings are made once, as json.loads would make them, and a Write's 16 MiB file costs
the service the 16 MiB of its text (invariant 6).

The reading is bounded and total (invariant 13): nesting past MAX_DEPTH, more than
MAX_VALUES values or a shape past MAX_SHAPE bytes is refused before json.loads sees it
(TooBig, whose event is blocked: invariant 12), anything not JSON is NotJson. The
placeholders carry a random token of this reading, so no string of the body can pass
for one. Where each long string was in the file is kept (``Read.places``): a hook's
stdin copies those bytes from the file again rather than encoding the string
(jsonstream.py)."""

from __future__ import annotations

import codecs
import json
import os
import re
from typing import Any, NamedTuple

PIECE = 256 * 1024  # bytes read from the file at a time
LONG = 256  # bytes of a string literal past which it is decoded on its own (a MultiEdit of
# many edits keeps its shape small)
MAX_DEPTH = 200  # arrays and objects inside one another (json.loads: its recursion's)
MAX_VALUES = 65536  # arrays' elements and objects' members, all together
MAX_SHAPE = 16 * 2**20  # bytes of the body outside its decoded-apart strings: the body's own
# limit, so no body the API takes is refused for its shape (MAX_VALUES bounds its parse)
STRUCTURE = re.compile(rb'["\[\]{},]')
BLANKS = re.compile(rb"[ \t\r\n]+")
BOM = b"\xef\xbb\xbf"
BACKSLASH, QUOTE = 0x5C, b'"'
HIGH = (b"d8", b"d9", b"da", b"db")  # \uD800-\uDBFF: the first of a surrogate pair


class NotJson(ValueError):
    """The body is not JSON."""


class TooBig(ValueError):
    """The body is JSON past what initd reads of one (its message says which bound)."""


class Read(NamedTuple):
    value: Any
    places: dict[int, tuple[str, int, int]]  # id of a long string: (it, start, end)
    # of its literal in the file, quotes included


def load(fd: int, size: int, start: int = 0) -> Read:
    """The JSON value of bytes ``start:size`` of the file ``fd`` (UTF-8), or NotJson, or
    TooBig."""
    scan = _Scan(fd, size)
    scan.run(start + (3 if os.pread(fd, 3, start) == BOM else 0))
    try:
        shape = json.loads(scan.shape.decode("ascii"))
    except (ValueError, RecursionError):
        raise NotJson("body is not valid JSON") from None
    del scan.shape
    decoded = [_long(fd, *span) if isinstance(span, tuple) else span for span in scan.apart]
    places = {id(text): (text, *span) for text, span in zip(decoded, scan.apart, strict=True)
              if isinstance(span, tuple)}
    return Read(_filled(shape, scan.token, decoded), places)


class _Scan:
    """One pass over the file: the shape, and the strings taken apart (a long one's
    place in the file, another's text), in the order they come."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd, self.size = fd, size
        self.shape = bytearray()
        self.apart: list[tuple[int, int] | str] = []
        self.token = os.urandom(8).hex()
        self.depth = self.values = 0
        self.begun = -1  # where the literal in progress starts in the file (-1: none)
        self.string: bytearray | None = None  # its bytes so far (None: long)
        self.slashes = 0  # backslashes that end what it has so far

    def run(self, at: int) -> None:
        while at < self.size:
            buf = os.pread(self.fd, min(PIECE, self.size - at), at)
            if not buf:
                raise NotJson("body is shorter than its Content-Length")
            i = 0
            while i < len(buf):
                i = self._outside(buf, i, at) if self.begun < 0 else self._inside(buf, i, at)
            at += len(buf)
        if self.begun >= 0:
            raise NotJson("body is not valid JSON (a string is not closed)")

    def _outside(self, buf: bytes, i: int, at: int) -> int:
        found = STRUCTURE.search(buf, i)
        j = len(buf) if found is None else found.start()
        self._shape(BLANKS.sub(b" ", buf[i:j]))  # (a run of blanks is one: "1 2" stays two)
        if found is None:
            return j
        char = buf[j : j + 1]
        if char == QUOTE:
            self.begun, self.string, self.slashes = at + j, bytearray(QUOTE), 0
            return j + 1
        if char in b"[{":
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise TooBig(f"body is nested too deep for initd to read (over {MAX_DEPTH})")
        elif char in b"]}":
            self.depth -= 1
        self.values += 1
        if self.values > MAX_VALUES:
            raise TooBig(f"body has over {MAX_VALUES} values")
        self._shape(char)
        return j + 1

    def _inside(self, buf: bytes, i: int, at: int) -> int:
        end = i
        while True:
            end = buf.find(QUOTE, end)
            if end < 0 or _slashes(buf, i, end, self.slashes) % 2 == 0:
                break
            end += 1
        stop = len(buf) if end < 0 else end
        if self.string is not None:
            self.string += buf[i:stop]
            if len(self.string) > LONG:
                self.string = None  # long: read from the file again, decoded apart
        self.slashes = _slashes(buf, i, stop, self.slashes)
        if end < 0:
            return len(buf)
        self._close(at + end + 1)
        return end + 1

    def _close(self, end: int) -> None:
        """The literal in progress ends at ``end`` (its closing quote included)."""
        literal, begun, self.string, self.begun = self.string, self.begun, None, -1
        if literal is not None and literal.isascii():
            self._shape(literal + QUOTE)
            return
        if literal is None:
            self.apart.append((begun, end))
        else:
            self.apart.append(_text(_utf8(bytes(literal[1:]))))
        self._shape(b'"\\u0000%s:%d"' % (self.token.encode(), len(self.apart) - 1))

    def _shape(self, more: bytes | bytearray) -> None:
        self.shape += more
        if len(self.shape) > MAX_SHAPE:
            raise TooBig(f"body over {MAX_SHAPE} bytes outside its long strings")


def _slashes(buf: bytes, lo: int, end: int, before: int) -> int:
    """Backslashes right before ``end`` in ``buf[lo:end]``, and ``before`` more if they
    reach back to ``lo``."""
    n = end
    while n > lo and buf[n - 1] == BACKSLASH:
        n -= 1
    return end - n + (before if n == lo else 0)


def _utf8(raw: bytes) -> str:
    try:
        return raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise NotJson("body is not valid JSON (not UTF-8)") from None


def _text(inside: str) -> str:
    """A literal's text, from what is between its quotes."""
    try:
        text, _ = json.decoder.scanstring('"' + inside + '"', 1)  # type: ignore[attr-defined]
    except ValueError:
        raise NotJson("body is not valid JSON (a string)") from None
    return str(text)


def _long(fd: int, start: int, end: int) -> str:
    """The text of the literal at ``start:end`` of the file, decoded a piece at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")
    pieces: list[str] = []
    at, stop, carry = start + 1, end - 1, b""
    while True:
        more = os.pread(fd, min(PIECE, stop - at), at)
        if not more and at < stop:
            raise NotJson("body is shorter than its Content-Length")
        raw, at = carry + more, at + len(more)
        last = at >= stop
        cut = len(raw) if last else cut_at(raw)
        carry = raw[cut:]
        try:
            pieces.append(_text(decoder.decode(raw[:cut], final=last)))
        except UnicodeDecodeError:
            raise NotJson("body is not valid JSON (not UTF-8)") from None
        if last:
            return pieces[0] if len(pieces) == 1 else "".join(pieces)


def cut_at(raw: bytes) -> int:
    """The last place in ``raw`` (a literal's bytes from a place between two of its units:
    characters and escapes) where it may be cut: between two units, and never between
    the two escapes of a surrogate pair. 0 if there is none."""
    c = len(raw)
    while c > 0:
        q = raw.rfind(b"\\", max(0, c - 6), c)
        if q < 0:
            return c  # (no escape can reach c: the longest is 6 bytes)
        if _slashes(raw, 0, q + 1, 0) % 2 == 0:
            return c  # q ends a "\\": what follows it up to c is plain
        length = 6 if raw[q + 1 : q + 2] == b"u" else 2
        if c >= q + length and not (c == q + 6 and raw[q + 2 : q + 4].lower() in HIGH):
            return c
        c = q  # before that escape
    return 0


def _filled(shape: Any, token: str, apart: list[str]) -> Any:
    """``shape`` with each placeholder (a key or a value) its string."""
    mark = "\0" + token + ":"

    def real(text: str) -> str:
        return apart[int(text[len(mark):])] if text.startswith(mark) else text

    if isinstance(shape, str):
        return real(shape)
    stack = [shape]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if any(key.startswith(mark) for key in item):
                renamed = {real(key): value for key, value in item.items()}
                item.clear()
                item.update(renamed)
            for key, value in item.items():
                if isinstance(value, str):
                    item[key] = real(value)
                elif isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(item, list):
            for n, value in enumerate(item):
                if isinstance(value, str):
                    item[n] = real(value)
                elif isinstance(value, dict | list):
                    stack.append(value)
    return shape
