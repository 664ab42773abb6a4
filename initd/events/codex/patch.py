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
from collections.abc import Mapping
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
    """The files ``text`` writes, in its order (none: it is no patch)."""
    ops: list[FileOp] = []
    inside = False  # in a file's lines (not past an "*** End Patch")
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        bare = line.strip()  # (Codex reads a header "with leading/trailing whitespace")
        header = next(((kind, bare[len(p):].strip()) for p, kind in HEADERS
                       if bare.startswith(p)), None)
        if header is not None and header[0] == "move" and ops and ops[-1].kind == "update" \
                and ops[-1].moved is None:
            ops[-1] = ops[-1]._replace(moved=header[1])
        elif header is not None:
            ops.append(FileOp(*header))
        elif bare in (BEGIN, END):
            inside = False
            continue
        elif inside and not line.startswith(("***", "@@")):
            ops[-1] = _line(ops[-1], line)
        inside = inside or header is not None
    return ops


def _line(op: FileOp, line: str) -> FileOp:
    mark, rest = line[:1], line[1:]
    if op.kind == "add":
        return op._replace(new=(*op.new, rest)) if mark == "+" else op
    if op.kind != "update" or mark not in ("", " ", "-", "+"):
        return op
    return op._replace(old=op.old + ((rest,) if mark in ("", " ", "-") else ()),
                       new=op.new + ((rest,) if mark in ("", " ", "+") else ()))


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
    one replace, never a list of its lines (a Write's 16 MiB file has 400,000 of them,
    and they cost six times the file as strings of their own)."""
    if not text:
        return ()
    ends = text.endswith("\n")
    body = text.replace("\n", "\n" + mark, text.count("\n") - ends)
    return (mark, body) if ends else (mark, body, "\n")


def _relative(path: str, cwd: str) -> str:
    if os.path.isabs(path) and cwd and os.path.commonpath([path, cwd]) == cwd:
        return os.path.relpath(path, cwd)
    return path
