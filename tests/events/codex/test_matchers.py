"""Codex's matchers (initd/events/codex/matchers.py): every occurrence, a list of exact
names, or an RE2 expression searched; a tool by its name or an alias; ignored on events
Codex does not match."""

from __future__ import annotations

import pytest

from initd.events.claude.matchers import MatcherError
from initd.events.codex.matchers import matcher


@pytest.mark.parametrize(("text", "tool", "matches"), [
    ("", "Bash", True), ("*", "anything", True),
    ("Bash", "Bash", True), ("Bash", "BashOutput", False),  # names: exact
    ("Bash|apply_patch", "apply_patch", True),
    ("mcp__memory", "mcp__memory__create_entities", False),
    ("^Bash", "BashOutput", True), ("mcp__memory.*", "mcp__memory__x", True),  # searched
    ("Write", "apply_patch", True), ("Edit", "Write", True),  # aliases, both ways
    ("apply_patch", "MultiEdit", True), ("Agent", "spawn_agent", True),
    ("Read", "Bash", False),
])
def test_a_tool_matcher(text: str, tool: str, matches: bool) -> None:
    made = matcher("pre_tool", text)
    assert made is not None and made.matches({"tool_name": tool}) is matches


def test_other_fields_and_ignored_events() -> None:
    start = matcher("session_start", "startup|resume")
    assert start is not None and start.matches({"source": "resume"})
    assert not start.matches({"source": "clear"})
    assert matcher("stop", "anything") is None  # Codex ignores a Stop's matcher
    assert matcher("user_prompt_submit", "(") is None  # an invalid one there too


def test_a_regex_re2_cannot_run_is_an_error() -> None:
    with pytest.raises(MatcherError):
        matcher("pre_tool", "(?=Bash)Bash")
    with pytest.raises(MatcherError):
        matcher("pre_tool", "(a")
