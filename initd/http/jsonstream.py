"""A JSON value written out a piece at a time: what a hook reads on stdin (a Write's
16 MiB file among it) without the whole text, then its bytes, in memory per hook.

``encoded(value)`` gives the bytes ``json.dumps(value).encode()`` gives, in pieces: the
value's shape is encoded at once by json.dumps, with a placeholder for each long string
(past PIECE characters), and each long string is encoded PIECE characters at a time as
the pieces are taken. A long string the body's reading found in the request's file
(jsonbody.Read.places: the body still open, ``source``) is not encoded at all: its
bytes are copied from the file, as the client sent them (the same string, in the
client's escapes). So a hook's stdin costs a piece of memory, whatever the payload."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

from initd.http import spool

PIECE = 64 * 1024  # characters of a long string encoded at a time; bytes copied at a time
DEEP = 64  # containers inside one another that are looked into for long strings (a
# deeper one is encoded whole by json.dumps: the same bytes, at once)


def encoded(value: Any) -> Iterator[bytes]:
    """The bytes of ``json.dumps(value).encode()``, a piece at a time. What json.dumps
    refuses (TypeError, ValueError) is raised here, before any piece is taken."""
    longs: list[str] = []
    token = os.urandom(8).hex()
    text = json.dumps(_hollow(value, longs, f"\0{token}:", 0))
    return _pieces(text, longs, token) if longs else iter((text.encode(),))


def _pieces(text: str, longs: list[str], token: str) -> Iterator[bytes]:
    at = 0
    for found in re.finditer(r'"\\u0000' + token + r':(\d+)"', text):
        yield text[at : found.start()].encode()
        long = longs[int(found[1])]
        # (only an ASCII one: a client's raw UTF-8 may hold a lone surrogate, which
        # json.loads takes and a strict reader of the hook's stdin would not)
        place = spool.opened(long) if long.isascii() else None
        yield from _string(long) if place is None else _copied(*place)
        at = found.end()
    yield text[at:].encode()


def _copied(fd: int, start: int, end: int) -> Iterator[bytes]:
    """A string's literal as the client sent it: bytes ``start:end`` of the request's
    file (``fd``: ours, closed at the end). A read that fails raises (the hook's run
    fails closed: http/jsonbody.py read the same bytes a moment ago)."""
    try:
        while start < end:
            piece = os.pread(fd, min(PIECE, end - start), start)
            if not piece:
                raise OSError(f"the request's file ended at {start} of {end}")
            start += len(piece)
            yield piece
    finally:
        os.close(fd)


def _string(text: str) -> Iterator[bytes]:
    """One string's JSON, PIECE characters at a time (escapes are per character, so the
    pieces' escapes are the whole string's)."""
    yield b'"'
    for at in range(0, len(text), PIECE):
        yield json.dumps(text[at : at + PIECE])[1:-1].encode()
    yield b'"'


def _hollow(value: Any, longs: list[str], mark: str, depth: int) -> Any:
    """``value`` with each long string a placeholder (``mark`` and its number in
    ``longs``): its containers copied (not their strings), down to DEEP."""
    if isinstance(value, str):
        if len(value) <= PIECE:
            return value
        longs.append(value)
        return f"{mark}{len(longs) - 1}"
    if depth >= DEEP:
        return value
    if isinstance(value, dict):
        return {_hollow(k, longs, mark, depth + 1) if isinstance(k, str) else k:
                _hollow(v, longs, mark, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_hollow(v, longs, mark, depth + 1) for v in value]
    return value
