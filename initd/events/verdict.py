"""What one event hook's result means (block, approve, abort), as a pure function of
the result, the hook and the event, and the tally of an event's hooks so far. Each hook's
dialect says what its result means (``Meaning``, a part of events/dialect.py's Dialect):
initd's rules (``initd_verdict``) for every format without rules of its own, Claude Code's
for its hooks (claude/answers.py)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

from initd.events import answers
from initd.events.actions import ActionResult, Status
from initd.events.model import DialectName, EventHook
from initd.hooks.kinds import Event

CONTEXT_EVENTS = ("pre_iteration",)
PERMISSIONS = ("allow", "ask", "deny")  # in order of precedence (deny wins)
STOPS = ("stop", "subagent_stop")  # continue: false wins over their block


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
    # what the hook said besides (each dialect's reading of its answer): None when it said
    # nothing
    permission: str | None = None
    context: str | None = None
    system_message: str | None = None
    continue_: bool | None = None
    stop_reason: str | None = None
    updated_input: dict[str, Any] | None = None
    suppress: bool = False
    status: Status | None = None  # ERROR: its answer could not be read (answers.py)
    updated_output: Any = None  # what the model sees of the tool's output (a post_tool)


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


class Meaning(Protocol):
    """What the tally asks of a hook's dialect."""

    @property
    def together(self) -> bool:
        """Its matched hooks all run, at once, even after one of them blocked: their
        blocks' reasons and feedback are joined (Claude Code's)."""

    def verdict(self, result: ActionResult, hook: EventHook, event: Event) -> Verdict:
        """What ``result`` means; answers.Unreadable when the hook's answer cannot be read."""


def verdict(result: ActionResult, hook: EventHook, event: Event, dialect: Meaning) -> Verdict:
    """What ``result`` means by its dialect's rules. An answer that looks like JSON and
    cannot be read (answers.py) is the hook's error, never "no answer": it blocks."""
    try:
        return dialect.verdict(result, hook, event)
    except answers.Unreadable as err:
        failed = result._replace(status=Status.ERROR, error=str(err), fails_closed=True)
        return dialect.verdict(failed, hook, event)._replace(status=Status.ERROR)


def initd_verdict(result: ActionResult, hook: EventHook, event: Event) -> Verdict:
    """initd's rules: exit 0 is fine; a JSON decision is honoured; exit 2 blocks a
    blockable event (with exit2_blocks); ``block: true`` makes any failure block; a hook
    that could not run is an error, which blocks only with ``on_error: deny`` (or when the
    error is initd's: ``fails_closed``); ``on_failure: abort`` (or a webhook's
    ``on_timeout: abort``) stops the hooks after it."""
    decision, reason, feedback = (None, None, None) if result.fails_closed \
        else _decision(result)  # (an answer initd could not read is no answer)
    note = result.error
    blocks = False
    if result.status in (Status.ERROR, Status.UNTRUSTED):
        blocks = event.blockable and (hook.on_error == "deny" or result.fails_closed)
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
    """What the hooks of one event have said so far. The first block ends the event, but
    a Claude Code hook's block does not stop the event's other Claude Code hooks (Claude
    Code runs them all): their blocks' reasons are joined, deny wins over ask over allow,
    their contexts and system messages are joined, and ``continue: false`` wins."""

    def __init__(self, event: Event, dialects: Mapping[DialectName, Meaning]) -> None:
        self.event = event
        self.dialects = dialects
        self.blocked = self.aborted = False
        self.reason: str | None = None
        self.feedback: str | None = None
        self.context: list[str] = []
        self.results: list[HookResult] = []
        self.gather = False  # a Claude Code hook blocked: the other Claude hooks still run
        self.unblockable: str | None = None  # why no hook may block now (the Stop cap)
        self.permission: str | None = None  # Claude Code's answers, as the Outcome has them
        self.contexts: list[str] = []
        self.messages: list[str] = []
        self.keep_going: bool | None = None  # continue
        self.stop_reason: str | None = None
        self.updated_input: dict[str, Any] | None = None
        self.updated_output: Any = None

    @property
    def stopped(self) -> bool:
        return self.aborted or (self.blocked and not self.gather)

    def error(self, hook: EventHook, message: str, status: Status = Status.ERROR) -> None:
        self.record(hook, ActionResult(status, error=message), self.event)

    def record(self, hook: EventHook, result: ActionResult, event: Event) -> None:
        dialect = self.dialects[hook.dialect]
        said = verdict(result, hook, event, dialect)
        if said.blocks and self.unblockable is not None:
            said = said._replace(blocks=False, note=self.unblockable)
        elif said.blocks and self._halted():
            said = said._replace(blocks=False, note=HALTED)
        if event.name in CONTEXT_EVENTS:
            text = _context_text(hook, result)
            if text:  # a hook that printed nothing adds no empty line (as iteratr does)
                self.context.append(text)
        self.results.append(HookResult(
            hook=hook.where, dialect=hook.dialect, action=hook.action, command=hook.label,
            status=Status.BLOCKED if said.blocks else said.status or result.status,
            exit_code=result.exit_code, stdout="" if said.suppress else result.stdout,
            stderr=result.stderr, timed_out=result.timed_out,
            duration_ms=result.duration_ms, decision=said.decision, error=said.note))
        if said.blocks:
            self.reason = f"{self.reason}\n{said.reason}" if self.blocked else said.reason
            # (a dialect whose hooks run one after another, all of them: VS Code's)
            gathers = dialect.together or getattr(dialect, "gathers", False)
            self.blocked, self.gather = True, self.gather or gathers
            self.feedback = said.feedback or (result.stderr.strip() if event.name in (
                "teammate_idle", "task_completed") else None) or self.feedback
        elif said.decision == Decision.APPROVE and said.reason and self.reason is None:
            self.reason = said.reason
        if said.feedback and not said.blocks:
            self.feedback = f"{self.feedback}\n{said.feedback}" if self.feedback and \
                dialect.together else said.feedback
        if said.aborts:
            self.aborted = True
            self.reason = self.reason or f"{hook.label} failed (on_failure: abort)"
        self._answers(said)

    def _answers(self, said: Verdict) -> None:
        """What a hook said besides blocking (a permission, context, a message, continue)."""
        order = PERMISSIONS
        if said.permission is not None and (self.permission is None or order.index(
                said.permission) > order.index(self.permission)):
            self.permission = said.permission
            if not self.blocked and said.reason:  # ask's or allow's: for the user
                self.reason = said.reason
        self.contexts += [said.context] if said.context else []
        self.messages += [said.system_message] if said.system_message else []
        if said.updated_input is not None:
            self.updated_input = said.updated_input
        if said.updated_output is not None:
            self.updated_output = said.updated_output
        if said.continue_ is False and self.keep_going is not False:
            self.keep_going, self.stop_reason = False, said.stop_reason
            if self._halted() and self.blocked:  # the Stop happens: nothing is blocked
                self.blocked = self.gather = False
                self.results = [r._replace(status=Status.OK if r.exit_code == 0 else
                                           Status.FAILED, error=r.error or HALTED)
                                if r.status == Status.BLOCKED else r for r in self.results]
        elif said.continue_ is True and self.keep_going is None:
            self.keep_going = True

    def _halted(self) -> bool:
        return self.keep_going is False and self.event.name in STOPS

    def answers(self) -> dict[str, Any]:
        """What the hooks said besides blocking, as the Outcome's fields (None: no hook
        said it): every agent's answers are these (events/wire.py)."""
        return dict(permission_decision=self.permission,
                    additional_context="\n".join(self.contexts) or None,
                    continue_=self.keep_going, stop_reason=self.stop_reason,
                    system_message="\n".join(self.messages) or None,
                    updated_input=self.updated_input, updated_output=self.updated_output)


HALTED = "continue: false (a Claude Code hook's) wins: the agent stops, nothing is blocked"


def _decision(result: ActionResult) -> tuple[Decision | None, str | None, str | None]:
    """A JSON stdout ``{"decision", "reason", "feedback"}`` (Claude Code's, AutoAgent's);
    answers.Unreadable when it looks like one and cannot be read."""
    data = answers.read(result)
    if data is None:
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
