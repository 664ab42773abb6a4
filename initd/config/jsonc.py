"""JSON with comments (JSONC), as devcontainer.json is written: ``//`` and ``/* */``
comments and trailing commas, turned into plain JSON for ``json.loads``.

A comment becomes spaces (its newlines kept), so the line and column of a JSON error
still point into the file as written. Text inside strings is never touched: a URL's
``//`` or a ``/*`` in a value survives. A comma is dropped only where it follows a value
and only a ``}`` or ``]`` comes next (comments and white space between); ``[,]`` and
``{,}`` stay as they are, and json says what is wrong with them. An unclosed ``/*`` is
an error here (VS Code's parser says so too): json would otherwise accept what the
comment swallowed.
"""

from __future__ import annotations

import json
from typing import Any

OPENERS = "[{,"  # after one of these a comma is no trailing comma: json reports it


class JSONCError(ValueError):
    """Not JSONC: says where."""


def strip(text: str) -> str:
    """``text`` as plain JSON: comments blanked, trailing commas removed."""
    out: list[str] = []
    i, n = 0, len(text)
    comma: int | None = None  # where a comma that may be trailing was written
    last = ""  # the last significant character written (outside strings and comments)
    while i < n:
        ch = text[i]
        if ch == '"':
            end = _string_end(text, i)
            out.append(text[i:end])
            i, last, comma = end, '"', None
            continue
        if ch == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
            continue
        if ch == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                line = text.count("\n", 0, i) + 1
                raise JSONCError(f"line {line}: a /* comment is never closed")
            out.append("".join(c if c == "\n" else " " for c in text[i:end + 2]))
            i = end + 2
            continue
        if ch in " \t\r\n":
            out.append(ch)
            i += 1
            continue
        if ch in "}]" and comma is not None:
            out[comma] = " "
        comma = len(out) if ch == "," and last and last not in OPENERS else None
        out.append(ch)
        last = ch
        i += 1
    return "".join(out)


def _string_end(text: str, start: int) -> int:
    """The index just past the string that opens at ``start`` (or the end of the text,
    for an unclosed one: json says so)."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        i += 1
    return len(text)


def loads(text: str) -> Any:
    """Parse JSONC. ValueError (JSONCError, json.JSONDecodeError) says where it is wrong;
    nesting too deep for the parser (RecursionError) is one too."""
    try:
        return json.loads(strip(text))
    except RecursionError:
        raise JSONCError("nested too deep") from None
