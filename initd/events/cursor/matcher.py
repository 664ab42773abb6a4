"""A Cursor hook's matcher: a regular expression searched in its event's value
(https://cursor.com/docs/agent/hooks, "Matcher Configuration": the tool type on
preToolUse / postToolUse / postToolUseFailure, ``MCP:<tool_name>`` for an MCP tool;
"the full command string" on beforeShellExecution / afterShellExecution, "the subagent
type" on subagentStart / subagentStop; ``TabRead``, ``Read`` on beforeReadFile and
``TabWrite``, ``Write`` on afterFileEdit; the fixed words ``UserPromptSubmit``, ``Stop``,
``AgentResponse``, ``AgentThought``), after the event's own filter: an event of one tool
(beforeShellExecution's is ``Bash``) is that tool's alone. The value is read from
initd's shape of the event (Cursor's tool names from Claude Code's: names.cursor_tool);
a value the event does not have runs the hook (the hook decides: fail closed)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from initd.events.claude.matchers import Matcher
from initd.events.cursor.names import FIXED, cursor_tool, of_tool

VALUE = "value"


class CursorMatcher(Matcher):
    """``text``: the matcher as written; ``field``: the Cursor event of the hook;
    ``regex``: the expression (None: every occurrence of the event)."""

    __slots__ = ()

    def matches(self, payload: Mapping[str, Any]) -> bool:
        event = self.field or ""
        if not of_tool(event, payload.get("tool_name")):
            return False
        if not self.regex:
            return True
        value = value_of(event, payload)
        if not isinstance(value, str):
            return True
        return Matcher(self.text, VALUE, regex=self.regex).matches({VALUE: value})


def value_of(event: str, payload: Mapping[str, Any]) -> object:
    """What the matcher of the Cursor ``event`` is tested on, from initd's ``payload``."""
    if event in FIXED:
        return FIXED[event]
    given = payload.get("tool_input")
    given = given if isinstance(given, Mapping) else {}
    if event in ("beforeShellExecution", "afterShellExecution"):
        return given.get("command")
    if event == "subagentStart":
        return given.get("subagent_type", payload.get("subagent_type"))
    if event == "subagentStop":
        return payload.get("agent_type", payload.get("subagent_type"))
    if event == "beforeReadFile":
        return "Read"
    if event == "afterFileEdit":
        return "Write"
    return cursor_tool(payload.get("tool_name"))
