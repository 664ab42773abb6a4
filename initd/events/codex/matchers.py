"""Codex's matchers (openai/codex ``codex-rs/hooks/src/events/common.rs``): absent, ``""``
or ``"*"`` match every occurrence; only ASCII letters, digits, ``_`` and ``|`` is a list
of exact names ("mcp__memory" does not match "mcp__memory__create_entities"); anything
else is a regular expression searched in the value ("^Bash" matches "BashOutput"), run
with RE2 as Claude Code's are (claude/matchers.py). A tool is matched by its name or an
alias (``Write`` and ``Edit`` match ``apply_patch``), whichever initd's shape calls it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from initd.events.claude import matchers
from initd.events.claude.matchers import MatcherError
from initd.events.codex.names import MATCHED, tool_names

NAMES_ONLY = re.compile(r"[A-Za-z0-9_|]+")


class CodexMatcher(matchers.Matcher):
    def matches(self, payload: Mapping[str, Any]) -> bool:
        field = matchers.TOOL_FIELD
        name = payload.get(field) if self.field == field else None
        if not isinstance(name, str):
            return super().matches(payload)
        return any(super(CodexMatcher, self).matches({field: alias})
                   for alias in tool_names(name))


def matcher(event: str, text: str) -> CodexMatcher | None:
    """A group's matcher on ``event`` (None: Codex ignores it there, an invalid one
    too); MatcherError when it is a regular expression RE2 cannot run."""
    field = MATCHED.get(event)
    if field is None:
        return None
    if text in ("", "*"):
        return CodexMatcher(text, field)
    if NAMES_ONLY.fullmatch(text):
        return CodexMatcher(text, field, tuple(name for name in text.split("|") if name))
    problem = matchers.regex_problem(text)
    if problem is not None:
        raise MatcherError(problem)
    return CodexMatcher(text, field, regex=text)
