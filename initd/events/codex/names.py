"""Codex's hook events and tool names (https://developers.openai.com/codex/hooks, as
published 2026-05-18; the input schemas of @openai/codex@0.171.0), and initd's.

Codex's tools reach hooks as ``Bash`` (its shell, ``tool_input.command``),
``apply_patch`` (its file edits, the patch in ``tool_input.command``; ``Write`` and
``Edit`` match it, "as matcher aliases for compatibility with hook configurations that
describe edits using Claude Code-style names": openai/codex ``HookToolName``), MCP tools
as ``mcp__server__tool``, and ``spawn_agent`` (alias ``Agent``)."""

from __future__ import annotations

EVENTS = {
    "SessionStart": "session_start", "SessionEnd": "session_end",
    "UserPromptSubmit": "user_prompt_submit", "PreToolUse": "pre_tool",
    "PermissionRequest": "permission_request", "PostToolUse": "post_tool",
    "PreCompact": "pre_compact", "PostCompact": "post_compact",
    "SubagentStart": "subagent_start", "SubagentStop": "subagent_stop", "Stop": "stop",
    "Interrupt": "interrupt"}
NAMES = {event: name for name, event in EVENTS.items()}
# what a group's matcher is tested on (openai/codex events/common.rs
# matcher_pattern_for_event); Codex ignores the matcher of every other event, an invalid
# one too
MATCHED = {"pre_tool": "tool_name", "permission_request": "tool_name",
           "post_tool": "tool_name", "session_start": "source",
           "subagent_start": "agent_type", "subagent_stop": "agent_type"}
PATCH = "apply_patch"
FILE_TOOLS = ("Write", "Edit", "MultiEdit")  # initd's (Claude Code's): a patch, to Codex
# a tool as initd names it -> the names a Codex matcher is tested on (its own, its aliases)
ALIASES = {**{name: (PATCH, "Write", "Edit") for name in (PATCH, *FILE_TOOLS)},
           "spawn_agent": ("spawn_agent", "Agent"), "Agent": ("spawn_agent", "Agent")}


def tool_names(name: str) -> tuple[str, ...]:
    """The names a Codex hook's matcher is tested on for a tool initd calls ``name``."""
    return ALIASES.get(name, (name,))
