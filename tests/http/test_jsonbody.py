"""A spooled body's JSON, read a piece at a time (initd/http/jsonbody.py): the same value
json.loads gives, whatever the pieces' size and wherever they cut the strings (escapes,
surrogate pairs, UTF-8 characters across a cut); bounded (nesting, values, the shape)
and total: a body that is not JSON is NotJson, never another exception. Real files:
unnamed ones, as the service's spool makes them."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from initd.http import jsonbody
from initd.http.jsonbody import MAX_DEPTH, MAX_SHAPE, MAX_VALUES, NotJson, TooBig, cut_at


def loaded(data: bytes, piece: int | None = None) -> jsonbody.Read:
    fd = os.open(tempfile.gettempdir(), os.O_TMPFILE | os.O_RDWR, 0o600)
    try:
        os.write(fd, data)
        if piece is None:
            return jsonbody.load(fd, len(data))
        before = jsonbody.PIECE
        jsonbody.PIECE = piece
        try:
            return jsonbody.load(fd, len(data))
        finally:
            jsonbody.PIECE = before
    finally:
        os.close(fd)


def write_event(content: str, ascii_only: bool = True) -> bytes:
    return json.dumps({"tool_name": "Write", "tool_input": {
        "file_path": "a.py", "content": content}}, ensure_ascii=ascii_only).encode(
        "utf-8", "surrogatepass")


# what a long string may hold: escapes of every kind, a pair and its halves, UTF-8 of
# every length, backslashes in runs
PARTS = ["a", " ", '"', "\\", "\n", "\t", "\x01", "\u00e9", "\u20ac", "\U0001f600",
         "\ud83d", "\ude00", "u", "d8", "\\\\", "\\u"]


@st.composite
def texts(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(st.sampled_from(PARTS), min_size=1, max_size=3000)))


@settings(max_examples=150, deadline=None)
@given(text=texts(), ascii_only=st.booleans(), piece=st.integers(7, 5000))
@example(text="x" * 9000 + "\\" * 7, ascii_only=True, piece=4096)
def test_a_long_string_is_read_as_json_loads_reads_it(text: str, ascii_only: bool,
                                                       piece: int) -> None:
    data = write_event(text * 3, ascii_only)
    assert loaded(data, piece).value == json.loads(data)


@settings(max_examples=150, deadline=None)
@given(value=st.recursive(st.none() | st.booleans() | st.integers() | st.floats(
    allow_nan=False) | st.text(max_size=30), lambda inner: st.lists(inner, max_size=5) |
    st.dictionaries(st.text(max_size=10), inner, max_size=5), max_leaves=40),
       piece=st.integers(3, 300), indent=st.sampled_from([None, 1]))
def test_any_json_value_is_read_as_json_loads_reads_it(value: Any, piece: int,
                                                        indent: int | None) -> None:
    data = json.dumps(value, indent=indent, ensure_ascii=False).encode("utf-8",
                                                                       "surrogatepass")
    assert loaded(data, piece).value == json.loads(data)


@pytest.mark.parametrize("data", [
    b'{"a": 1,}', b'{"a" 1}', b'[1 2]', b'{"a": "b}', b'"' + b"x" * 9000, b"\xff\xfe",
    b'"' + b"x" * 9000 + b'\x01"', b'"' + b"x" * 9000 + b'\\q"', b'"\\ud83d\\uXYZW"',
    b'"' + b"\xc3" * 9000 + b'"', b'{"a": 01}', b"nul", b"", b'{"a": 1} x', b"{]",
    b'{"\xff": 1}', b"[1e99999999999999999999]" * 0 + b"[-]",
])
def test_what_is_not_json_is_not_json(data: bytes) -> None:
    with pytest.raises(NotJson):
        loaded(data)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300), piece=st.integers(1, 50))
@example(data=b'["\\', piece=1)
def test_any_bytes_are_a_value_or_refused(data: bytes, piece: int) -> None:
    try:
        value = loaded(data, piece).value
    except (NotJson, TooBig):
        return
    assert value == json.loads(data)


def test_the_bounds_are_refused_before_json_loads_reads_anything() -> None:
    deep = b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)
    with pytest.raises(TooBig, match="nested too deep"):
        loaded(deep)
    assert loaded(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH).value is not None
    with pytest.raises(TooBig, match="values"):
        loaded(b"[" + b"{}," * MAX_VALUES + b"{}]")
    multi_edit = {"tool_input": {"edits": [{"old_string": "a" * 2000, "new_string": "b" * 2000}
                                           for _ in range(600)]}}  # (2.3 MiB of edits)
    assert loaded(json.dumps(multi_edit).encode()).value == multi_edit
    with pytest.raises(TooBig, match="outside its long strings"):  # (a run of blanks
        loaded(b"[" + b"1" * (MAX_SHAPE + 1) + b"]")  # is one, digits are all there)
    spaced = b"[" + b" " * (MAX_SHAPE + 1) + b"1 ]"
    assert loaded(spaced).value == [1]


def test_a_long_string_keeps_its_place_in_the_file() -> None:
    content = "é\"\n" * 10_000
    data = write_event(content, ascii_only=False)
    read = loaded(data, 1000)
    found = read.value["tool_input"]["content"]
    text, start, end = read.places[id(found)]
    assert text is found and data[start:end] == json.dumps(content,
                                                            ensure_ascii=False).encode()
    assert all(len(t) > 0 for t, _, _ in read.places.values())


def test_no_string_of_the_body_passes_for_a_placeholder() -> None:
    """The shape's placeholders carry a token of this reading: a string spelled like one
    stays itself."""
    fake = "\u0000" + "0" * 16 + ":0"
    data = json.dumps({"a": "é" * 10, fake: fake, "b": "x" * 5000}).encode()
    assert loaded(data).value == json.loads(data)


def test_a_bom_is_read_past() -> None:
    assert loaded(b"\xef\xbb\xbf" + json.dumps({"a": "x" * 5000}).encode()).value == {
        "a": "x" * 5000}


@pytest.mark.parametrize(("raw", "ok"), [
    (b"abc", 3), (b"ab\\n", 4), (b"ab\\", 2), (b"a\\u00e9", 7), (b"a\\u00e", 1),
    (b"a\\ud83d", 1), (b"a\\ud83d\\ude00", 13), (b"a\\ud83d\\ude0", 1),
    (b"\\\\", 2), (b"\\\\\\", 2), (b"x\\\\u", 4), (b"\\ud83dabc", 9), (b"\\\\ud83d", 7),
])
def test_a_cut_falls_between_units_and_never_inside_a_pair(raw: bytes, ok: int) -> None:
    assert cut_at(raw) == ok


def many(count: int) -> Iterator[bytes]:
    for n in range(count):
        yield json.dumps({"n": n, "text": "y" * 5000}).encode()


def test_each_long_string_is_its_own_object() -> None:
    read = loaded(b"[" + b",".join(many(5)) + b"]")
    assert [item["n"] for item in read.value] == list(range(5))
    assert len(read.places) == 5
