"""A hook on a lifecycle event, from any dialect, as the engine runs it. The events
themselves (names, aliases, which may be blocked) are in initd/hooks/kinds.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from initd.events.conditions import Condition


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
