"""Codex's ``apply_patch`` envelope, read into the files it writes and written from
Claude Code's file tools (openai/codex ``codex-rs/apply-patch``, its grammar in
``apply_patch_tool_instructions.md``)::

    *** Begin Patch
    *** Add File: notes.txt
    +a new line
    *** Update File: src/app.py
    *** Move to: src/main.py
    @@ def main():
    -    old()
    +    new()
    *** Delete File: junk.txt
    *** End Patch

Every ``*** Add File:``, ``*** Update File:``, ``*** Move to:`` and ``*** Delete File:``
line names a file the patch writes, wherever it stands and however indented (Codex's
parser, ``parser.rs``, reads a header trimmed): a guard is shown each one even in a patch
Codex would refuse to apply. A path is relative to the session's cwd."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

BEGIN, END = "*** Begin Patch", "*** End Patch"
HEADERS = (("*** Add File: ", "add"), ("*** Update File: ", "update"),
           ("*** Delete File: ", "delete"), ("*** Move to: ", "move"))


class FileOp(NamedTuple):
    kind: str  # add | update | delete | move (a "Move to:" of no update)
    path: str  # as the patch writes it
    old: tuple[str, ...] = ()  # an update's lines before: its context and removed lines
    new: tuple[str, ...] = ()  # an add's lines; an update's context and added lines
    moved: str | None = None  # where an update's file goes ("*** Move to:")

    @property
    def written(self) -> str:
        """The file it writes: an update's where it moves to (Codex's ``Hunk::path``)."""
        return self.moved or self.path


def parse(text: str) -> list[FileOp]:
    """The files ``text`` writes, in its order (none: it is no patch). Each file's lines
    are gathered in lists, made tuples once at the end (a tuple made again per line is
    quadratic in the patch), from the text a line at a time (never a list of all its
    lines besides)."""
    ops: list[FileOp] = []
    gathered: list[tuple[list[str], list[str]]] = []  # each op's old and new lines
    inside = False  # in a file's lines (not past an "*** End Patch")
    for line in _lines(text):
        line = line.removesuffix("\r")
        bare = line.strip()  # (Codex reads a header "with leading/trailing whitespace")
        header = next(((kind, bare[len(p):].strip()) for p, kind in HEADERS
                       if bare.startswith(p)), None) if bare.startswith("*** ") else None
        if header is not None and header[0] == "move" and ops and ops[-1].kind == "update" \
                and ops[-1].moved is None:
            ops[-1] = ops[-1]._replace(moved=header[1])
        elif header is not None:
            ops.append(FileOp(*header))
            gathered.append(([], []))
        elif bare in (BEGIN, END):
            inside = False
            continue
        elif inside and not line.startswith(("***", "@@")):
            _line(ops[-1].kind, *gathered[-1], line)
        inside = inside or header is not None
    return [op._replace(old=tuple(old), new=tuple(new))
            for op, (old, new) in zip(ops, gathered, strict=True)]


def _lines(text: str) -> Iterator[str]:
    """What ``text.split("\n")`` gives, a line at a time."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]


def _line(kind: str, old: list[str], new: list[str], line: str) -> None:
    mark, rest = line[:1], line[1:]
    if kind == "add":
        if mark == "+":
            new.append(rest)
        return
    if kind != "update" or mark not in ("", " ", "-", "+"):
        return
    if mark in ("", " ", "-"):
        old.append(rest)
    if mark in ("", " ", "+"):
        new.append(rest)


def text(lines: tuple[str, ...]) -> str:
    return "".join(f"{line}\n" for line in lines)


def build(tool: str, given: Mapping[str, Any], cwd: str) -> str | None:
    """The patch that does what Claude Code's ``Write``, ``Edit`` or ``MultiEdit`` with
    ``given`` does (None: ``given`` has no path to write)."""
    path = given.get("file_path")
    if not isinstance(path, str) or not path:
        return None
    name = _relative(path, cwd)
    if tool == "Write":
        content = given.get("content")
        return "".join((BEGIN, "\n*** Add File: ", name, "\n",
                        *_marked(content if isinstance(content, str) else "", "+"), END, "\n"))
    edits = given.get("edits") if tool == "MultiEdit" else [given]
    hunks: list[str] = []
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, Mapping):
            hunks += ["@@\n", *_marked(str(edit.get("old_string") or ""), "-"),
                      *_marked(str(edit.get("new_string") or ""), "+")]
    return "".join((BEGIN, "\n*** Update File: ", name, "\n", *hunks, END, "\n"))


def _marked(text: str, mark: str) -> tuple[str, ...]:
    """``text``'s lines, each after ``mark`` and ending in a newline, as pieces to join:
    one replace, never a list of its lines (a string per line costs several times the
    text)."""
    if not text:
        return ()
    ends = text.endswith("\n")
    body = text.replace("\n", "\n" + mark, text.count("\n") - ends)
    return (mark, body) if ends else (mark, body, "\n")


def _relative(path: str, cwd: str) -> str:
    if os.path.isabs(path) and cwd and os.path.commonpath([path, cwd]) == cwd:
        return os.path.relpath(path, cwd)
    return path
