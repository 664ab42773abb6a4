"""The lifecycle events one engine serves, whichever hook system names them (DESIGN.md §6).

Each event has one canonical name and the names the seeds use for it. A CamelCase name
is read as its snake_case form, so AutoAgent's ``PreExecutionStart`` is
``pre_execution_start`` and Claude Code's ``PreToolUse`` is ``pre_tool_use``, an alias
of ``pre_tool``. Only a *blockable* event can be blocked (exit 2, a JSON ``decision:
block``, or any failure of a ``block: true`` hook); on any other, those are failures,
reported as such. An unknown name is an error where it is written, never ignored.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from initd.events.conditions import Condition


class Event(NamedTuple):
    name: str
    aliases: tuple[str, ...]
    blockable: bool
    fires: str  # when it fires, for people (initd hooks list, the README table)


EVENTS = (
    # iteratr (.iteratr.hooks.yml) and agent-pipelines (on_*): the agent's loop
    Event("session_start", ("on_session_start",), False, "the agent's session begins"),
    Event("pre_iteration", ("on_iteration_start",), False,
          "before each iteration's model call; hook output is context for its prompt"),
    Event("post_iteration", ("on_iteration_complete",), False, "after each iteration"),
    Event("stage_complete", ("on_stage_complete",), False, "a pipeline stage finished"),
    Event("session_end", ("on_session_complete",), False, "the session finished"),
    Event("error", ("on_error",), False, "an iteration failed"),
    # nyzhi ([[agent.hooks]])
    Event("after_edit", (), False, "a tool changed a file ({file})"),
    Event("after_turn", (), False, "a complete agent turn"),
    Event("pre_tool", ("pre_tool_use",), True, "before a tool runs: may block it"),
    Event("post_tool", ("post_tool_use",), False, "a tool succeeded"),
    Event("post_tool_failure", ("post_tool_use_failure",), False, "a tool failed"),
    Event("teammate_idle", (), True, "a teammate has no work: may reject, with feedback"),
    Event("task_completed", (), True, "a team task is done: may reject, with feedback"),
    # AutoAgent (.autoagent/config.json, PascalCase)
    Event("pre_execution_start", (), True, "before an issue's execution starts: may block"),
    Event("post_execution_start", (), False, "an issue's execution started"),
    Event("pre_execution_end", (), True, "before an issue is marked complete: may block"),
    Event("post_execution_end", (), False, "an issue's execution ended"),
    Event("stop", (), True, "the session is about to end: may block (keep going)"),
    Event("pre_git_commit", (), True, "before a commit: may block it"),
    Event("post_git_commit", (), False, "a commit was made"),
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


class EventHook(NamedTuple):
    """One action on one event, from any dialect, as the engine runs it."""

    event: str  # the canonical event name
    action: str  # script | shell | webhook | spawn | git-commit | git-push
    dialect: str  # discobot | iteratr | nyzhi | autoagent | pipelines
    source: str  # the file that defines it
    key: str  # where in that file, e.g. hooks.pre_iteration[0]
    label: str  # for people: the command, the URL, the pipeline
    spec: dict[str, Any]  # the action's own fields (command, url, body, message, …)
    timeout: float  # seconds
    wait: bool  # await it (False: fire-and-forget, still owned and reaped)
    when: Condition | None = None
    on_failure: str = "continue"  # continue | abort | retry
    retries: int = 0
    retry_delay: float = 5.0
    block: bool = False  # any non-zero exit blocks (a blockable event)
    exit2_blocks: bool = True  # exit 2 alone blocks (Claude Code's rule; not nyzhi's)
    on_error: str = "allow"  # a blocking hook that could not run or timed out: allow | deny
    tool_name: tuple[str, ...] = ()  # run only for these tools (case-insensitive)
    pattern: tuple[str, ...] = ()  # run only for files like these
    stage: str | None = None  # a loop.yaml's hooks: only for events of that stage
    workspace: bool = True  # defined by the workspace (trust may be required), not the image
    warnings: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.source}: {self.key}"
