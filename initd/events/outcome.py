"""What firing one event came to (engine.py): the agent's answer, in initd's terms, before
any agent's wire puts it in its own (events/wire.py)."""

from __future__ import annotations

from typing import Any, NamedTuple

from initd.events.verdict import HookResult
from initd.state import jsonview


class Outcome(NamedTuple):
    event: str
    blocked: bool
    reason: str | None
    feedback: str | None
    context: str | None
    aborted: bool
    results: list[HookResult]
    # what the hooks said besides (verdict.Tally.answers), in every agent's terms the same:
    # None when no hook said one
    permission_decision: str | None = None  # PreToolUse: allow | ask | deny
    additional_context: str | None = None  # for the model
    continue_: bool | None = None  # "continue": false: the agent stops (wins over a block)
    stop_reason: str | None = None  # for the user, with continue: false
    system_message: str | None = None  # for the user
    updated_input: dict[str, Any] | None = None  # PreToolUse: the tool's input to use
    updated_output: Any = None  # PostToolUse: what the model sees of the tool's output
    # by format, its hooks' answers no field above has (Gemini's toolConfig…), for its wire
    hook_specific: dict[str, list[dict[str, Any]]] | None = None

    def as_json(self) -> dict[str, Any]:
        """The outcome in initd's one JSON casing (the API's, the session record's)."""
        return jsonview.view(self)  # type: ignore[no-any-return]
