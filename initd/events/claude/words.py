"""One word of a shell command as bash will have it (shellwords.py finds the words):
``'rm'``, ``"rm"``, ``\\rm`` and ``$'\\x72m'`` are ``rm``; what only the running shell
knows (``$X``, ``$(…)``, a glob, a brace expansion) is a hole (wildcards.HOLE).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from initd.events.claude.wildcards import HOLE, Segment

if TYPE_CHECKING:
    from tree_sitter import Node

Word = tuple[Segment, ...]
Bound = tuple[str | None, Word | None]  # a variable set, and its value (None: not known)
QUOTED = {"raw_string", "ansi_c_string", "string", "translated_string", "heredoc_body",
          "comment"}
_BARE_ESCAPE = re.compile(r"\\(.)|\\$", re.DOTALL)
_BLANK = re.compile(r"[ \t\n]")
HOLDERS = ("command", "command_name", "concatenation")  # the nodes whose parts are words
_DOUBLE_ESCAPE = re.compile(r"\\([$`\"\\\n])")
_ANSI = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}"
                   r"|c.|.)", re.DOTALL)
_ANSI_NAMED = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
               "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


class Unknown(Exception):
    """What runs is known only when the shell runs it."""


WRAPPING = {"builtin", "command", "time", "coproc", "!", "-p", "--"}  # before a builtin
DECLARING = {"declare", "typeset", "local"}


def evaluates(command: tuple[Word, ...]) -> bool:
    """Whether a simple command has bash evaluate its words as expressions: ``let``, and
    ``declare -i`` (typeset, local), also behind ``builtin``, ``command``, ``time`` or
    ``coproc``, where the grammar reads a plain command (``builtin let 'a[$(rm …)]'``
    runs rm; ``command declare -i X`` makes every value of X one)."""
    texts = [literal(word) for word in command]
    while texts and texts[0] in WRAPPING:
        texts = texts[1:]
    return bool(texts) and (texts[0] == "let" or (texts[0] in DECLARING and any(
        text is not None and text.startswith("-") and "i" in text for text in texts[1:])))


def literal(word: Word) -> str | None:
    """The word's text, or None when part of it is known only when the shell runs it."""
    return None if HOLE in word else "".join(s for s in word if s is not None)


def prefix(word: Word) -> str:
    """The word's text up to its first hole."""
    end = word.index(HOLE) if HOLE in word else len(word)
    return "".join(s for s in word[:end] if s is not None)


def drop(word: Word, skip: int) -> Word:
    """The word without its first ``skip`` characters (``X=`` of ``X="$Y"``)."""
    rest: list[Segment] = []
    for segment in word:
        if segment is not None and skip:
            cut = min(skip, len(segment))
            skip -= cut
            segment = segment[cut:]
        rest.append(segment)
    return tuple(rest)


def text(node: Node, data: bytes) -> str:
    return data[node.start_byte:node.end_byte].decode()


def unread(node: Node, data: bytes) -> bool:
    """Whether the grammar kept text of a HOLDER's out of its named parts, or in one,
    where words would lose it: ``-$`` in ``rm -$"rf"`` (bash: ``-rf``), the ``$`` of
    ``x$`` (bash: ``x$``), ``$$`` (the shell's pid), an escaped blank between two parts
    (``rm \\ -rf``: bash's word is `` -rf``), a comment the grammar starts after an
    escaped blank. Only ``$"…"`` (a translated string: its ``$`` is no text) is read."""
    if node.type == "comment":  # `echo \\ #; rm x`: an escaped blank, then a word (rm runs)
        before = data[:max(node.start_byte - 1, 0)]
        escapes = len(before) - len(before.rstrip(b"\\"))
        return data[node.start_byte - 1:node.start_byte] in (b" ", b"\t") and escapes % 2 == 1
    if node.type not in HOLDERS:
        return False
    children = node.children
    for at, child in enumerate(children):
        after = children[at + 1] if at + 1 < len(children) else None
        gap = data[child.end_byte:after.start_byte] if after is not None else b""
        translated = child.type == "$" and child.end_byte - child.start_byte == 1 and \
            after is not None and after.type == "string" and not gap
        if gap.replace(b"\\\n", b"").strip() or (not child.is_named and not translated):
            return True
        if child.type == "word" and _BLANK.search(_BARE_ESCAPE.sub("", text(child, data))):
            return True  # a blank bash splits at, inside one word of the grammar's
    return False


def globbed(source: str) -> bool:
    """Whether the shell expands an unquoted word: ``*``, ``?``, ``[…]``, or a brace
    expansion (``{a,b}``, ``{1..3}``). One pass, whatever the word."""
    bracket = brace = separated = False
    at = 0
    while at < len(source):
        char = source[at]
        if char == "\\":
            at += 2
            continue
        if char in "*?" or (char == "]" and bracket) or (char == "}" and separated):
            return True
        bracket |= char == "["
        brace |= char == "{"
        separated |= brace and (char == "," or source.startswith("..", at))
        at += 1
    return False


def word(node: Node, data: bytes) -> Word:
    """One word as the shell will have it: literal text, and holes for what it computes."""
    kind, source = node.type, text(node, data)
    if kind == "word":
        return (HOLE,) if globbed(source) else (_BARE_ESCAPE.sub(_bare, source),)
    if kind in ("number", "variable_name"):
        return (source,)
    if kind == "raw_string":
        return (source[1:-1],)
    if kind == "ansi_c_string":
        return (_ANSI.sub(_ansi, source[2:-1]),)
    if kind == "translated_string" and node.named_children:
        return word(node.named_children[0], data)
    if kind == "string":
        return _double(node, data)
    if kind == "concatenation":
        bare = "".join(text(c, data) for c in node.named_children if c.type == "word")
        parts = [word(c, data) for c in node.named_children]
        # rm{,} is a brace expansion across its parts; an unquoted $X/rm may split into
        # words (X="rm -rf x "): the whole word is a hole, never a name with a known end
        if globbed(bare) or any(c.type not in QUOTED | {"word", "number"}
                                for c in node.named_children):
            return (HOLE,)
        return tuple(s for part in parts for s in part)
    return (HOLE,)  # $X, ${X}, $(…), `…`, $((…)), <(…), {a..b}: known when it runs


def _double(node: Node, data: bytes) -> Word:
    """A double-quoted string: its text with \\$ \\` \\" \\\\ and \\<newline> resolved,
    each expansion or substitution in it a hole."""
    parts: list[Segment] = []
    at, end = node.start_byte + 1, node.end_byte - 1
    for child in node.named_children:
        if child.type == "string_content":
            continue
        parts += [_DOUBLE_ESCAPE.sub(_unescaped, data[at:child.start_byte].decode()), HOLE]
        at = child.end_byte
    parts.append(_DOUBLE_ESCAPE.sub(_unescaped, data[at:end].decode()))
    return tuple(parts)


def _bare(found: re.Match[str]) -> str:
    return "" if found[1] in (None, "\n") else found[1]


def _unescaped(found: re.Match[str]) -> str:
    return "" if found[1] == "\n" else found[1]


def _ansi(found: re.Match[str]) -> str:
    """One escape of ``$'…'``, decoded as bash does (``$'\\x72m'`` is ``rm``)."""
    escape = found[1]
    if escape[0] in "xuU" and len(escape) > 1:
        return chr(min(int(escape[1:], 16), 0x10FFFF))
    if escape[0] in "01234567":
        return chr(int(escape, 8) & 0xFF)
    if escape[0] == "c" and len(escape) == 2:
        return chr(ord(escape[1].upper()) ^ 0x40)
    return _ANSI_NAMED.get(escape, "\\" + escape)
