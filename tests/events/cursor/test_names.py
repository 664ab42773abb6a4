"""Cursor's events and tools as initd names them (initd/events/cursor/names.py)."""

from __future__ import annotations

import pytest

from initd.events.cursor import names
from initd.hooks import kinds
from tests.conformance.cursor_hooks_support import EVENTS as REFERENCE


def test_every_event_of_the_reference_is_one_of_initds() -> None:
    assert set(names.EVENTS) == set(REFERENCE)
    assert all(kinds.resolve(event) is not None for event in names.EVENTS.values())
    assert set(names.GUARDS) <= set(names.EVENTS) and set(names.FIXED) <= set(names.EVENTS)


@pytest.mark.parametrize(("key", "event"), [
    ("hooks.stop[0]", "stop"), ("hooks.beforeShellExecution[3]", "beforeShellExecution"),
    ("hooks.nope[0]", None), ("stop[0]", None), ("other.stop[0]", None)])
def test_own_event(key: str, event: str | None) -> None:
    assert names.own_event(key) == event


@pytest.mark.parametrize(("event", "tool", "of"), [
    ("beforeShellExecution", "Bash", True), ("beforeShellExecution", "Read", False),
    ("beforeMCPExecution", "mcp__x__y", True), ("beforeMCPExecution", "mcpx", False),
    ("afterFileEdit", "MultiEdit", True), ("subagentStart", "Agent", True),
    ("preToolUse", "Anything", True), ("preToolUse", None, True),
    ("beforeReadFile", None, False), ("beforeReadFile", 3, False),
])
def test_of_tool(event: str, tool: object, of: bool) -> None:
    assert names.of_tool(event, tool) is of


@pytest.mark.parametrize(("tool", "cursor"), [
    ("Bash", "Shell"), ("Edit", "Write"), ("MultiEdit", "Write"), ("Agent", "Task"),
    ("mcp__github__create_issue", "MCP:create_issue"), ("Grep", "Grep"), (None, None)])
def test_cursor_tool(tool: object, cursor: object) -> None:
    assert names.cursor_tool(tool) == cursor
