"""The kinds of hook a discobot hook file may declare (initd/hooks/kinds.py): each event
by its name, its aliases and any hook system's CamelCase; whether it can be blocked; an
unknown name is None (an error where it is written)."""

from __future__ import annotations

import pytest

from initd.hooks import kinds


@pytest.mark.parametrize(("name", "event"), [
    ("pre_tool", "pre_tool"), ("pre_tool_use", "pre_tool"), ("PreToolUse", "pre_tool"),
    ("PreExecutionStart", "pre_execution_start"), ("on_iteration_start", "pre_iteration"),
    ("Stop", "stop"), ("PostToolUseFailure", "post_tool_failure"),
    ("UserPromptSubmit", "user_prompt_submit"), ("pre_tol", None), ("", None),
    ("PRE_TOOL", "pre_tool"), ("session", None), ("pre-commit", None),
])
def test_resolve(name: str, event: str | None) -> None:
    found = kinds.resolve(name)
    assert (found.name if found else None) == event


@pytest.mark.parametrize(("name", "snake"), [
    ("PreToolUse", "pre_tool_use"), ("pre_tool", "pre_tool"), ("A1B", "a1_b"),
    ("HTTPServer", "httpserver"), ("already_snake_Case", "already_snake_case")])
def test_snake(name: str, snake: str) -> None:
    assert kinds.snake(name) == snake


def test_every_name_is_one_events_and_a_guard_can_block() -> None:
    names = [n for e in kinds.EVENTS for n in (e.name, *e.aliases)]
    assert len(names) == len(set(names)) == len(kinds.BY_NAME)
    assert not set(kinds.TYPES) & set(names)  # a hook's own kinds are no event
    assert kinds.BY_NAME["pre_tool"].blockable and kinds.BY_NAME["stop"].blockable
    assert not kinds.BY_NAME["post_tool"].blockable  # the tool already ran
    assert kinds.known().split(", ") == [e.name for e in kinds.EVENTS]
