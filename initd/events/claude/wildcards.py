"""Permission rule wildcards (``Bash(git * main)``), matched against a command's text in
which some parts are known only when the shell runs it (``git $(printf push) -f``).

A text is a sequence of segments: literal strings, and ``HOLE`` for a part the shell
computes (an expansion, a substitution, a glob). A hole may turn out to be any text, so a
text with holes matches when *some* value of its holes would: a guard's ``if`` must not
be skipped by writing the word it looks for as ``$(printf push)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

HOLE: Final = None  # a segment the shell computes: any text, spaces included
Segment = str | None
STAR = "\0*"  # a wildcard, as a token of a parsed pattern (never a character of one)


class Budget:
    """How many characters the matching of one rule may still step through; spent, the
    rule is treated as matched (a command too big to check runs the hook)."""

    def __init__(self, steps: int) -> None:
        self.left = steps

    def spend(self, steps: int) -> bool:
        self.left -= steps
        return self.left >= 0


def wildcard(pattern: str, text: str) -> bool:
    """``*`` is any text (``\\*`` a star); a trailing `` *`` that is the only wildcard also
    matches the command without it (``git *`` matches ``git``). Segments are found left to
    right with str.find: linear, whatever the text."""
    segments = [s.replace("\0", "*") for s in pattern.replace("\\*", "\0").split("*")]
    if len(segments) == 1:
        return text == segments[0]
    if len(segments) == 2 and not segments[1] and segments[0].endswith(" ") and \
            text == segments[0][:-1]:
        return True
    first, *middle, last = segments
    end = len(text) - len(last)
    if not text.startswith(first) or not text.endswith(last) or end < len(first):
        return False
    at = len(first)
    for segment in middle:
        found = text.find(segment, at, end)
        if found < 0:
            return False
        at = found + len(segment)
    return True


def matches(pattern: str, text: Sequence[Segment], budget: Budget) -> bool:
    """Whether ``pattern`` matches ``text`` for some value of its holes."""
    if HOLE not in text:
        return wildcard(pattern, "".join(s for s in text if s is not None))
    tokens = _tokens(pattern)
    if not budget.spend(sum(len(s) if s is not None else 1 for s in text)):
        return True  # too big to check: the hook runs (fail closed)
    if _nfa(tokens, text):
        return True
    # `git *`, the only wildcard at the end after a space, also matches `git`
    bare = tokens[:-2] if tokens[-2:] == [" ", STAR] and STAR not in tokens[:-2] else None
    return bare is not None and _nfa(bare, text)


def _tokens(pattern: str) -> list[str]:
    """The pattern as characters and STARs (``\\*`` a literal star; runs of stars one)."""
    tokens: list[str] = []
    at = 0
    while at < len(pattern):
        if pattern.startswith("\\*", at):
            tokens.append("*")
            at += 2
            continue
        if pattern[at] != "*":
            tokens.append(pattern[at])
        elif not tokens or tokens[-1] != STAR:
            tokens.append(STAR)
        at += 1
    return tokens


def _nfa(tokens: list[str], text: Sequence[Segment]) -> bool:
    """The pattern as a set of positions (bits of an int), stepped through the text one
    character at a time; a hole takes the set to every position from its lowest on (a
    hole can spell whatever the pattern asks from there)."""
    stars = sum(1 << i for i, t in enumerate(tokens) if t == STAR)
    chars: dict[str, int] = {}
    for i, token in enumerate(tokens):
        if token != STAR:
            chars[token] = chars.get(token, 0) | 1 << i
    every = (1 << (len(tokens) + 1)) - 1

    def closed(reach: int) -> int:  # a star may match nothing (runs of stars are one)
        return reach | (reach & stars) << 1

    reach = closed(1)
    for segment in text:
        if segment is None:
            low = reach & -reach
            reach = every & ~(low - 1) if reach else 0
            continue
        for char in segment:
            reach = closed((reach & chars.get(char, 0)) << 1 | reach & stars)
            if not reach:
                return False
    return bool(reach >> len(tokens) & 1)
