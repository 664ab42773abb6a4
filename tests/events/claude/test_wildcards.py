"""Claude Code's permission-rule wildcards (initd/events/claude/wildcards.py): ``*`` matches
any text, a pattern against text the shell computes (a hole) matches only what it must,
and a pattern's cost is bounded."""

from __future__ import annotations

import pytest

from initd.events.claude.wildcards import HOLE, Budget, matches, wildcard


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    ("git *", "git", True), ("git *", "gitk", False), ("* install", "npm install", True),
    ("a\\*b", "a*b", True), ("a\\*b", "axb", False), ("*", "", True),
    ("a*b*c", "abc", True), ("a*b*c", "acb", False), ("ab*ba", "aba", False),
])
def test_wildcards(pattern: str, text: str, expected: bool) -> None:
    assert wildcard(pattern, text) is expected


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    ("git push *", ["git ", HOLE, " --force"], True),  # $(printf push) may be push
    ("git push *", ["echo ", HOLE], False),  # a hole never changes the words before it
    ("rm *", [HOLE, "/bin/true"], True),
    ("npm test", ["npm ", HOLE], True),
    ("npm test", ["npm x", HOLE], False),
    ("ls *", ["ls", HOLE], True), ("a\\*b", ["a", HOLE, "b"], True),
    ("a\\*b", ["a*", HOLE], True), ("a\\*b", ["ab", HOLE], False),
])
def test_wildcards_against_text_the_shell_computes(pattern: str, text: list[str | None],
                                                  expected: bool) -> None:
    assert matches(pattern, text, Budget(10_000)) is expected
