"""The kinds of hook a discobot hook file may declare in ``type:``: session, file,
pre-commit, or one of the lifecycle events one engine serves, whichever hook system
names it.

Each event has one canonical name and the names other hook systems use for it. A
CamelCase name is read as its snake_case form, so AutoAgent's ``PreExecutionStart`` is
``pre_execution_start`` and Claude Code's ``PreToolUse`` is ``pre_tool_use``, an alias
of ``pre_tool``. Only a *blockable* event can be blocked (exit 2, a JSON ``decision:
block``, or any failure of a ``block: true`` hook); on any other, those are failures,
reported as such. An unknown name is an error where it is written, never ignored.
The table lives with the hooks because a hook file's ``type:`` may name an event: the
events engine (initd/events/) uses it, never the reverse.
"""

from __future__ import annotations

import re
from typing import NamedTuple

TYPES = ("session", "file", "pre-commit")  # a discobot hook's own kinds


class Event(NamedTuple):
    name: str
    aliases: tuple[str, ...]
    blockable: bool


EVENTS = (
    # iteratr (.iteratr.hooks.yml) and agent-pipelines (on_*): the agent's loop
    Event("session_start", ("on_session_start",), False),
    Event("pre_iteration", ("on_iteration_start",), False),
    Event("post_iteration", ("on_iteration_complete",), False),
    Event("stage_complete", ("on_stage_complete",), False),
    Event("session_end", ("on_session_complete",), False),
    Event("error", ("on_error",), False),
    # nyzhi ([[agent.hooks]])
    Event("after_edit", (), False),
    Event("after_turn", (), False),
    Event("pre_tool", ("pre_tool_use",), True),
    Event("post_tool", ("post_tool_use",), False),
    Event("post_tool_failure", ("post_tool_use_failure",), False),
    Event("teammate_idle", (), True),
    Event("task_completed", (), True),
    # AutoAgent (.autoagent/config.json, PascalCase)
    Event("pre_execution_start", (), True),
    Event("post_execution_start", (), False),
    Event("pre_execution_end", (), True),
    Event("post_execution_end", (), False),
    Event("stop", (), True),
    Event("pre_git_commit", (), True),
    Event("post_git_commit", (), False),
    # Claude Code (.claude/settings.json): PreToolUse, PostToolUse, Stop, SessionStart and
    # SessionEnd are the events above; these are its own
    Event("user_prompt_submit", (), True),
    Event("subagent_stop", (), True),
    Event("pre_compact", (), True),  # exit 2 or decision: block "Blocks compaction"
    Event("notification", (), False),
    # Claude Code's events of its current reference (2.1.x): a block where it says one
    # stops the action (a permission denied, a task not created, a config change refused)
    Event("setup", (), False),
    Event("instructions_loaded", (), False),
    Event("user_prompt_expansion", (), True),
    Event("permission_request", (), True),
    Event("permission_denied", (), False),
    Event("post_tool_batch", (), True),
    Event("subagent_start", (), False),
    Event("task_created", (), True),
    Event("stop_failure", (), False),
    Event("post_compact", (), False),
    Event("elicitation", (), True),
    Event("elicitation_result", (), True),
    Event("config_change", (), True),
    Event("worktree_create", (), True),
    Event("worktree_remove", (), False),
    Event("cwd_changed", (), False),
    Event("file_changed", (), False),
    Event("directory_added", (), False),  # (/add-dir: "they can't block the add")
    Event("message_display", (), False),  # ("display-only": the text is shown either way)
    # OpenAI Codex's: the user interrupted a turn (its hooks observe it)
    Event("interrupt", (), False),
    # Cursor's, which no other agent has: the agent's message and thought written, Tab's
    # read (its "permission": "deny" keeps the file from Tab) and edit, a workspace opened
    Event("after_agent_response", (), False),
    Event("after_agent_thought", (), False),
    Event("before_tab_file_read", (), True),
    Event("after_tab_file_edit", (), False),
    Event("workspace_open", (), False),
    # Gemini CLI's events of the model's own loop, which no other agent has
    Event("before_model", (), True),
    Event("after_model", (), True),
    Event("before_tool_selection", (), False),
)
BY_NAME = {alias: event for event in EVENTS for alias in (event.name, *event.aliases)}


def snake(name: str) -> str:
    """``PreExecutionStart`` -> ``pre_execution_start``; snake_case stays as it is."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def resolve(name: str) -> Event | None:
    """The event a hook system calls ``name``, or None when there is no such event."""
    return BY_NAME.get(name) or BY_NAME.get(snake(name))


def known() -> str:
    """Every accepted name, for an error message."""
    return ", ".join(event.name for event in EVENTS)
