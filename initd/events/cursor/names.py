"""Cursor's hook events as its ``hooks.json`` and its hooks' input name them, and initd's
(hooks/kinds.py), from its hooks reference (https://cursor.com/docs/agent/hooks, the
revision of 2026-08-24, "Hook categories"): 18 agent events, 2 of Tab, 1 of the app.

Cursor's events before and after a tool are initd's ``pre_tool`` and ``post_tool`` of that
tool, in Claude Code's words (events/wire.py): a shell command is ``Bash``, a file read
``Read``, an edit ``Edit`` (or ``Write``), an MCP tool ``mcp__SERVER__TOOL``, and a
subagent (Cursor's "Subagent (Task tool) lifecycle") the ``Task`` tool. So a guard of any
format on ``Bash`` holds for Cursor's ``beforeShellExecution``, and a Cursor
``beforeShellExecution`` hook runs for any agent's shell command."""

from __future__ import annotations

EVENTS = {
    "sessionStart": "session_start", "sessionEnd": "session_end",
    "preToolUse": "pre_tool", "postToolUse": "post_tool",
    "postToolUseFailure": "post_tool_failure",
    "subagentStart": "pre_tool", "subagentStop": "subagent_stop",
    "beforeShellExecution": "pre_tool", "afterShellExecution": "post_tool",
    "beforeMCPExecution": "pre_tool", "afterMCPExecution": "post_tool",
    "beforeReadFile": "pre_tool", "afterFileEdit": "post_tool",
    "beforeSubmitPrompt": "user_prompt_submit", "preCompact": "pre_compact",
    "stop": "stop", "afterAgentResponse": "after_agent_response",
    "afterAgentThought": "after_agent_thought", "beforeTabFileRead": "before_tab_file_read",
    "afterTabFileEdit": "after_tab_file_edit", "workspaceOpen": "workspace_open"}

# initd's (Claude Code's) tools
SHELL, READ, WRITE, EDIT, MULTI_EDIT, TASK, AGENT = (
    "Bash", "Read", "Write", "Edit", "MultiEdit", "Task", "Agent")
MCP = "mcp__"
EDITS = (EDIT, WRITE, MULTI_EDIT)
# the tools of the events that are one tool's: an event of a tool not here is not theirs
OF_TOOL: dict[str, tuple[str, ...]] = {
    "beforeShellExecution": (SHELL,), "afterShellExecution": (SHELL,),
    "beforeReadFile": (READ,), "afterFileEdit": EDITS, "subagentStart": (TASK, AGENT),
    "beforeMCPExecution": (MCP,), "afterMCPExecution": (MCP,)}
# Cursor's tool names (preToolUse's matcher: "Shell, Read, Write, Grep, Delete, Task, and
# MCP tools using the MCP:<tool_name> format") for initd's; any other keeps its name
TOOLS = {SHELL: "Shell", READ: "Read", WRITE: "Write", EDIT: "Write", MULTI_EDIT: "Write",
         TASK: "Task", AGENT: "Task"}

# the events whose answer can stop the action ("permission", or beforeSubmitPrompt's
# "continue"): exit 2 blocks them, and so does a failure of a failClosed hook
PERMISSION = ("preToolUse", "subagentStart", "beforeShellExecution", "beforeMCPExecution",
              "beforeReadFile", "beforeTabFileRead")
GUARDS = (*PERMISSION, "beforeSubmitPrompt")
ASKS = ("preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile")
FOLLOW_UPS = ("stop", "subagentStop")  # followup_message, capped by loop_limit
# answers gathered from every Cursor hook of the event and given back to Cursor whole
GATHERED = {"sessionStart": "env", "workspaceOpen": "pluginPaths"}
# a matcher's value where it is a fixed word ("Matched against the value `Stop`")
FIXED = {"beforeSubmitPrompt": "UserPromptSubmit", "stop": "Stop",
         "afterAgentResponse": "AgentResponse", "afterAgentThought": "AgentThought"}
MATCHED = (*FIXED, "preToolUse", "postToolUse", "postToolUseFailure", "subagentStart",
           "subagentStop", "beforeShellExecution", "afterShellExecution",
           "beforeMCPExecution", "afterMCPExecution", "beforeReadFile", "afterFileEdit")


def own_event(key: str) -> str | None:
    """The Cursor event a hook is written for, from its key (``hooks.stop[0]``)."""
    name = key.split(".", 1)[-1].split("[", 1)[0]
    return name if key.startswith("hooks.") and name in EVENTS else None


def of_tool(event: str, tool: object) -> bool:
    """Whether initd's ``tool`` is one the Cursor ``event`` is about (any, for the
    events of every tool)."""
    tools = OF_TOOL.get(event)
    if tools is None:
        return True
    if not isinstance(tool, str):
        return False
    return tool.startswith(MCP) if tools == (MCP,) else tool in tools


def cursor_tool(tool: object) -> object:
    """Cursor's name for initd's ``tool``: ``MCP:TOOL`` for ``mcp__SERVER__TOOL``."""
    if isinstance(tool, str) and tool.startswith(MCP):
        return f"MCP:{tool.split('__', 2)[-1]}"
    return TOOLS.get(tool, tool) if isinstance(tool, str) else tool
