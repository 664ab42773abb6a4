"""What one event hook's result means (block, approve, abort), as a pure function of
the result, the hook and the event, and the tally of an event's hooks so far."""

from __future__ import annotations

import enum
import json
from typing import NamedTuple

from initd.events.actions import ActionResult, Status
from initd.events.model import EventHook
from initd.hooks.kinds import Event

CONTEXT_EVENTS = ("pre_iteration",)


class Decision(enum.StrEnum):
    """A hook's own answer, in a JSON stdout (Claude Code's, AutoAgent's)."""

    BLOCK = "block"
    APPROVE = "approve"


class Verdict(NamedTuple):
    blocks: bool  # the event is blocked by this hook
    aborts: bool  # the hooks after this one do not run
    decision: Decision | None  # the hook's own answer, if it gave one
    reason: str | None
    feedback: str | None
    note: str | None  # the result's error: why it did not count as it asked, if so


class HookResult(NamedTuple):
    """One hook's line in an event's outcome."""

    hook: str
    dialect: str
    action: str
    command: str
    status: Status
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    duration_ms: float
    decision: Decision | None
    error: str | None


def verdict(result: ActionResult, hook: EventHook, event: Event) -> Verdict:
    """Exit 0 is fine; a JSON decision is honoured; exit 2 blocks a blockable event (with
    exit2_blocks); ``block: true`` makes any failure block; a hook that could not run
    is an error, which blocks only with ``on_error: deny``; ``on_failure: abort`` (or
    a webhook's ``on_timeout: abort``) stops the hooks after it."""
    decision, reason, feedback = _decision(result)
    note = result.error
    blocks = False
    if result.status in (Status.ERROR, Status.UNTRUSTED):
        blocks = event.blockable and hook.on_error == "deny"
        reason = f"{hook.label}: {result.error}"
    elif decision == Decision.BLOCK or (decision is None and (  # an explicit answer wins
            (result.exit_code == 2 and hook.exit2_blocks)
            or (hook.block and result.status == Status.FAILED))):
        if event.blockable:
            blocks = True
            reason = reason or (result.stderr.strip() or result.stdout.strip()
                                or f"blocked by {hook.label} (exit {result.exit_code})")
        else:
            note = note or f"asked to block, but {event.name} cannot be blocked"
    aborts = result.aborted or (hook.on_failure == "abort"
                                and result.status not in (Status.OK, Status.STARTED))
    return Verdict(blocks, aborts, decision, reason, feedback, note)


class Tally:
    """What the hooks of one event have said so far."""

    def __init__(self, event: Event) -> None:
        self.event = event
        self.blocked = self.aborted = False
        self.reason: str | None = None
        self.feedback: str | None = None
        self.context: list[str] = []
        self.results: list[HookResult] = []

    @property
    def stopped(self) -> bool:
        return self.blocked or self.aborted

    def error(self, hook: EventHook, message: str, status: Status = Status.ERROR) -> None:
        self.record(hook, ActionResult(status, error=message), self.event)

    def record(self, hook: EventHook, result: ActionResult, event: Event) -> None:
        said = verdict(result, hook, event)
        if event.name in CONTEXT_EVENTS:
            text = _context_text(hook, result)
            if text:  # a hook that printed nothing adds no empty line (as iteratr does)
                self.context.append(text)
        self.results.append(HookResult(
            hook=hook.where, dialect=hook.dialect, action=hook.action, command=hook.label,
            status=Status.BLOCKED if said.blocks else result.status,
            exit_code=result.exit_code, stdout=result.stdout, stderr=result.stderr,
            timed_out=result.timed_out, duration_ms=result.duration_ms,
            decision=said.decision, error=said.note))
        if said.blocks:
            self.blocked, self.reason = True, said.reason
            self.feedback = said.feedback or (result.stderr.strip() if event.name in (
                "teammate_idle", "task_completed") else None) or self.feedback
        elif said.decision == Decision.APPROVE and said.reason and self.reason is None:
            self.reason = said.reason
        if said.feedback and not said.blocks:
            self.feedback = said.feedback
        if said.aborts:
            self.aborted = True
            self.reason = self.reason or f"{hook.label} failed (on_failure: abort)"


def _decision(result: ActionResult) -> tuple[Decision | None, str | None, str | None]:
    """A JSON stdout ``{"decision", "reason", "feedback"}`` (Claude Code's, AutoAgent's)."""
    text = result.stdout.strip()
    if not text.startswith("{"):
        return None, None, None
    try:
        data = json.loads(text)
    except ValueError:
        return None, None, None
    if not isinstance(data, dict):
        return None, None, None
    said = data.get("decision")
    decision = Decision(said) if said in ("block", "approve") else None
    reason, feedback = data.get("reason"), data.get("feedback")
    return (decision, reason if isinstance(reason, str) else None,
            feedback if isinstance(feedback, str) else None)


def _context_text(hook: EventHook, result: ActionResult) -> str:
    """iteratr's raw output, and its words for what went wrong."""
    text = result.stdout
    if result.timed_out:
        return f"{text}[Hook timed out after {hook.timeout:g}s]"
    if result.status in (Status.ERROR, Status.UNTRUSTED):
        return f"{text}[Hook command failed: {result.error}]"
    if result.status == Status.FAILED:
        stderr = f"\n[stderr]\n{result.stderr}" if result.stderr else ""
        return f"{text}[Hook command failed: exit status {result.exit_code}]{stderr}"
    return text.rstrip("\n")
