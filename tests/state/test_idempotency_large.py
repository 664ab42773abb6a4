"""A request body's digest (initd/state/idempotency.py): the same body, the same digest,
whatever its keys' order; a long string hashed a piece at a time gives the digest it
had hashed whole (a Write's file is never copied to be hashed)."""

from __future__ import annotations

import hashlib
import json
import tracemalloc

from initd.state.idempotency import PIECE, digest

FILE = "é \"x\"\n\U0001f600" * (2**20)


def whole(body: object) -> str:
    """The digest as it was made before pieces (1b5efbc's): the same walk, every scalar
    json.dumps'd whole."""
    sha = hashlib.sha256()
    stack: list[object] = [body]
    while stack:
        item = stack.pop()
        if isinstance(item, bytes):
            sha.update(item)
        elif isinstance(item, dict):
            sha.update(b"{")
            stack.append(b"}")
            for name in sorted(item, key=str, reverse=True):
                stack += [item[name], json.dumps(str(name)).encode() + b":"]
        elif isinstance(item, list | tuple):
            sha.update(b"[")
            stack.append(b"]")
            for value in reversed(item):
                stack += [value, b","]
        else:
            sha.update(json.dumps(item, default=str).encode(errors="surrogatepass"))
    return sha.hexdigest()


def test_a_long_string_has_the_digest_it_had_whole() -> None:
    for body in [{"content": FILE}, ["a", FILE[: PIECE + 1], 1], FILE, {"b": 1, "a": [2]}]:
        assert digest(body) == whole(body)


def test_a_long_string_is_hashed_without_a_copy() -> None:
    tracemalloc.start()
    try:
        digest({"tool_input": {"content": FILE}})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20, peak


def test_the_same_body_in_another_order_is_the_same_digest() -> None:
    assert digest({"a": 1, "b": [1, {"c": FILE}]}) == digest({"b": [1, {"c": FILE}], "a": 1})
    assert digest({"a": FILE}) != digest({"a": FILE + "x"})
