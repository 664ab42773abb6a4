"""A payload written out a piece at a time (initd/http/jsonstream.py): the very bytes
json.dumps gives, whatever the value; a long string in pieces of its own, never encoded
whole; and one read from a request's file still open copied from that file, the
client's own bytes (as long as the file is open: after, it is encoded again)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from initd.http import jsonbody, jsonstream
from initd.http.spool import Spool
from initd.state.agentfs import Place

LONG = "é\"\\\n\U0001f600" * 30_000  # far past a piece


@settings(max_examples=100, deadline=None)
@given(value=st.recursive(st.none() | st.booleans() | st.integers() | st.text() |
                          st.sampled_from([LONG, "x" * (jsonstream.PIECE + 1)]),
                          lambda inner: st.lists(inner, max_size=4) |
                          st.dictionaries(st.text(max_size=8) | st.just(LONG), inner,
                                          max_size=4), max_leaves=12))
def test_the_pieces_are_json_dumps_bytes(value: Any) -> None:
    assert b"".join(jsonstream.encoded(value)) == json.dumps(value).encode()


def test_a_long_string_is_written_in_pieces() -> None:
    pieces = list(jsonstream.encoded({"content": LONG, "n": [1, LONG]}))
    assert max(len(p) for p in pieces) <= 6 * jsonstream.PIECE  # (each \uXXXX: 6 bytes)
    assert len(pieces) > 2 * len(LONG) // jsonstream.PIECE


def test_what_json_dumps_refuses_is_refused_before_any_piece() -> None:
    with pytest.raises(TypeError):
        jsonstream.encoded({"a": LONG, "b": object()})


def spooled(tmp: Path, data: bytes) -> tuple[Any, Any]:
    spool = Spool(Place(str(tmp)))
    body = spool.take(len(data))
    body.add(data)
    read = jsonbody.load(body.fileno(), len(data))
    body.keep(read.places)
    return body, read.value


def test_a_string_of_an_open_body_is_copied_from_its_file(tmp_path: Path) -> None:
    content = "a \"quoted\"\n" * 40_000
    raw = json.dumps(content).encode()  # (its own escapes)
    body, value = spooled(tmp_path, b'{"tool_input": {"content": ' + raw + b"}}")
    stdin = {"event": "pre_tool", **value}
    written = b"".join(jsonstream.encoded(stdin))
    assert raw in written and json.loads(written) == stdin  # the client's bytes, as sent
    body.close()
    again = b"".join(jsonstream.encoded(stdin))  # closed: encoded, as json.dumps does
    assert again == json.dumps(stdin).encode()


@pytest.mark.parametrize("raw_text", [
    json.dumps("é \"quoted\"\n" * 40_000, ensure_ascii=False)[1:-1].encode(),  # raw é
    b"x" * 100_000 + b"\xed\xa0\x80" + b"y" * 10,  # a lone surrogate, raw: json.loads takes it
])
def test_a_string_that_is_not_ascii_is_written_as_json_dumps_does(tmp_path: Path,
                                                                   raw_text: bytes) -> None:
    """Only an ASCII string is copied as the client sent it: raw UTF-8 may hold a lone
    surrogate, which a strict reader of a guard's stdin (serde_json, Python in a UTF-8
    locale) refuses, so the guard would crash and its tool call go through. Written as
    json.dumps writes it, every hook's stdin is ASCII."""
    body, value = spooled(tmp_path, b'{"tool_input": {"content": "' + raw_text + b'"}}')
    written = b"".join(jsonstream.encoded(value))
    body.close()
    assert written.isascii() and json.loads(written.decode("utf-8", "strict")) == value
    assert written == json.dumps(value).encode()


def test_pieces_left_untaken_let_the_file_go(tmp_path: Path) -> None:
    """A hook that stops reading: the pieces are closed, and the descriptor they held of
    the request's file with them."""
    body, value = spooled(tmp_path, json.dumps({"c": "x" * 300_000}).encode())
    before = len(os.listdir("/proc/self/fd"))
    pieces = jsonstream.encoded(value)
    next(pieces), next(pieces)
    assert len(os.listdir("/proc/self/fd")) == before + 1
    pieces.close()  # type: ignore[attr-defined]
    assert len(os.listdir("/proc/self/fd")) == before
    body.close()


def test_the_placeholders_are_this_writings_own(tmp_path: Path) -> None:
    fake = "\u0000" + "0" * 16 + ":0"
    value = {fake: fake, "a": LONG}
    assert b"".join(jsonstream.encoded(value)) == json.dumps(value).encode()
