"""Fire one event: run its hooks in order and say what the agent should do (docs/events.md,
"Lifecycle events").

For each hook of the event, in the order they load (dialects/__init__.py):
1. trust: with enforcement on, a workspace hook not approved as it is now does not run,
   and is refused with the reason on every event it is written for: nothing of it (its
   matcher, ``if``, pattern, ``when``) is evaluated before it is approved;
2. filters: a loop's hooks only for its ``stage``; ``tool_name`` (a comma list, any case)
   against the payload's tool; ``pattern`` (``*.ext`` list, path substring, or glob)
   against its ``file``/``files``: a command with ``{file}`` runs once per file; Claude
   Code's ``matcher`` and ``if`` (claude/matchers.py), an identical Claude command once;
3. ``when``: false, and the hook is skipped; a condition that cannot be evaluated is an
   error result;
4. the action, again and again with ``on_failure: retry``; one not awaited is started and
   owned by ``Background`` (bounded, reaped, stopped with initd);
5. what it means: exit 0 is fine; a JSON stdout ``{"decision": "block"|"approve",
   "reason", "feedback"}`` is honoured; exit 2 blocks a blockable event with stderr
   (else stdout) as the reason; ``block: true`` makes any failure block; a hook that
   could not run or timed out is an *error*, distinct from "no", which blocks only with
   ``on_error: deny``; ``on_failure: abort`` (or a webhook's ``on_timeout: abort``)
   stops the hooks after it;
6. ``LAST_HOOK_STATUS``, ``HOOK_RESPONSE`` and ``SPAWN_OUTPUT`` carry on to the next.
The first block ends the event (a dialect's hooks that run ``together`` all run, at once:
parallel.py; each dialect reads its answers). What did not load stands in after them as an
error that blocks a blockable event (standins.py). ``pre_iteration``'s output, raw, in
order, is the context for the agent's prompt (iteratr's way). Blocked Stops in a row are
counted, and capped (stoploop.py).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from initd.events import parallel, standins, variables
from initd.events.actions import ActionResult, Call, Status, replayed
from initd.events.background import Background, attempts
from initd.events.conditions import ConditionError
from initd.events.context import EventContext, Firing
from initd.events.dialect import prepared
from initd.events.dialects import DIALECTS, Cache
from initd.events.filters import applies, deduplicated, files_for, rewritten
from initd.events.model import EventHook
from initd.events.outcome import Outcome
from initd.events.records import Sessions
from initd.events.stoploop import EVENTS as STOP_EVENTS
from initd.events.stoploop import StopLoop
from initd.events.trust import for_event_hook
from initd.events.verdict import CONTEXT_EVENTS, Tally
from initd.events.wire import Origin
from initd.hooks import kinds
from initd.hooks.kinds import Event
from initd.state import jsonview
from initd.state.journal import Entry, once

BACKGROUND_LIMIT = 16  # fire-and-forget actions running at once; more are refused


class UnknownEvent(LookupError):
    pass


class Engine:
    def __init__(self, ctx: EventContext, cache: Cache, sessions: Sessions | None = None) -> None:
        self.ctx = ctx
        self.cache = cache
        self.background = Background(BACKGROUND_LIMIT, ctx.log)
        self.sessions = sessions  # the session's record: every event and its outcome
        self._warned: set[tuple[str, str]] = set()
        self.stops = StopLoop(ctx.state_dir, ctx.log)  # Stops blocked in a row

    def fire(self, name: str, payload: dict[str, Any],
             cancel: threading.Event | None = None, journal: Entry | None = None,
             origin: Origin | None = None) -> Outcome:
        """Run the event's hooks. With a ``journal`` (the request's, initd/state/journal/), a
        hook an earlier delivery of the same request fired is not run again: its recorded
        result counts (or, never recorded, it is reported as interrupted). With an
        ``origin`` (an agent's own payload, read by its wire), each hook of a format reads
        the event in its own agent's shape (its Dialect's ``stdin``)."""
        event = kinds.resolve(name)
        if event is None:
            raise UnknownEvent(f"no event {name!r} (known: {kinds.known()})")
        found = self.cache.get()
        hooks = [h for h in found.hooks if h.event == event.name]
        # trust before any filter: nothing of a hook not approved (its matcher, `if`,
        # pattern, when) is evaluated on the agent's payload; it is refused, with its
        # reason, on every event it is written for
        refused = {id(h): why for h in hooks if (why := self._refused(h)) is not None}
        hooks = deduplicated(hooks, payload, lambda hook: id(hook) in refused)
        table = variables.table(event, payload, self.ctx)
        marker = self._record(lambda sessions: sessions.begin(event.name)) if hooks else None
        state = Tally(event, DIALECTS)
        state.unblockable = self.stops.why_not(event.name, journal)  # the Stop loop's cap
        said = self.stops.said(event.name, payload, journal)
        # Claude Code's hooks have the payload on stdin only, as in Claude Code: no
        # TOOL_INPUT=… in their environment (a Write's whole file would not fit one)
        own = variables.table(event, {}, self.ctx)
        in_order = {h.dialect for h in hooks if h.sequential and id(h) not in refused
                    and applies(h, payload)}  # formats whose hooks run one by one now
        # Claude Code's, run in parallel: (hook, its call, its step), or (hook, None, why
        # trust refuses it), in load order
        together: list[tuple[EventHook, Call | None, str]] = []
        run = Firing(event, said, own, found.pipelines, cancel, journal, origin)
        for hook in hooks:
            if state.stopped:
                break
            if DIALECTS[hook.dialect].together and hook.dialect not in in_order and (
                    hook.wait or id(hook) in refused):
                together += self._gathered(hook, run, state, refused.get(id(hook)))
                continue
            self._together(together, event, own, state, journal)
            if id(hook) in refused:
                state.error(hook, refused[id(hook)], Status.UNTRUSTED)
                continue
            self._each(hook, run, state, payload, table, hook.dialect in in_order)
        self._together(together, event, own, state, journal)
        # what did not load (or was not read) stands in after the hooks that were: an
        # error in the answer, which blocks a blockable event (invariant 12)
        standins.add(found.unread, event, state, self._warned, self.ctx.log)
        return self._end(event, state, marker, payload, journal)

    def _gathered(self, hook: EventHook, run: Firing, state: Tally, refused: str | None
                  ) -> list[tuple[EventHook, Call | None, str]]:
        """A hook of a format whose hooks run at once (Claude Code's): its calls, one per
        view of the event (Firing.views), each with its journal step; or why trust
        refuses it."""
        if refused is not None:
            return [(hook, None, refused)]
        made: list[tuple[EventHook, Call | None, str]] = []
        for part, view in enumerate(run.views(hook, run.said)):
            ready = self._prepare(hook, run.event, view, run.own, state, run.pipelines,
                                  run.cancel, run.origin, part)
            made += [(hook, *ready)] if ready is not None else []
        return made

    def _each(self, hook: EventHook, run: Firing, state: Tally, payload: dict[str, Any],
              table: dict[str, Any], in_order: bool) -> None:
        """A hook of a format whose hooks run one at a time: once per view of the event
        (Firing.views) and, a command with ``{file}``, once per file it names."""
        stdin_only = DIALECTS[hook.dialect].stdin_only
        for part, view in enumerate(run.views(hook, run.said if stdin_only else payload)):
            names = run.own if stdin_only else table if not part else {
                **table, **variables.named(run.event, view, self.ctx)}
            given, came = rewritten(view, run.origin, state.updated_input if in_order
                                    else None)
            for file in files_for(hook, given):
                self._one(hook, run.event, given if file is None else {**given, "file": file},
                          names, state, run.pipelines, run.cancel, run.journal, came, part)
                if state.stopped:
                    return

    def refuse(self, name: str, why: str) -> Outcome:
        """The event's payload could not be taken (over the API's limit, nested too deep):
        no hook ran, and the answer says so with an error that blocks a blockable event
        (invariant 12: never an error the agent's harness could read as "allowed")."""
        event = kinds.resolve(name)
        if event is None:
            raise UnknownEvent(f"no event {name!r} (known: {kinds.known()})")
        state = Tally(event, DIALECTS)
        state.unblockable = self.stops.why_not(event.name)
        state.error(standins.payload(event), why)
        return self._end(event, state, None, {})

    def _end(self, event: Event, state: Tally, marker: Any, payload: dict[str, Any],
             journal: Entry | None = None) -> Outcome:
        outcome = Outcome(event.name, state.blocked, state.reason, state.feedback,
                          "\n".join(state.context) if event.name in CONTEXT_EVENTS else None,
                          state.aborted, state.results, **state.answers())
        # a Stop's additionalContext keeps the conversation going "through the same loop
        # protections as decision: "block"" (the reference): it counts as a block does
        goes_on = outcome.blocked or (event.name in STOP_EVENTS and outcome.continue_ is
                                      not False and bool(outcome.additional_context))
        self.stops.after(event.name, goes_on, journal)  # once per request
        self._record(lambda sessions: sessions.end(marker, outcome.as_json(), payload))
        return outcome

    def _record(self, write: Callable[[Sessions], Any]) -> Any:
        """A write to the session's record; failing to write is logged, never the
        agent's problem (its hooks ran, their outcome is in the answer)."""
        if self.sessions is None:
            return None
        try:
            return write(self.sessions)
        except OSError as err:
            self.ctx.log.error("session record not written", error=str(err))
            return None

    def _together(self, together: list[tuple[EventHook, Call | None, str]], event: Event,
                  table: dict[str, Any], state: Tally, journal: Entry | None) -> None:
        """Claude Code's awaited hooks gathered so far, run at once (parallel.py), their
        results (and the refusals of trust) recorded in load order; the list is emptied."""
        results = iter(parallel.run([(step, call) for _, call, step in together
                                     if call is not None], journal))
        for hook, call, said in together:
            if call is None:
                state.error(hook, said, Status.UNTRUSTED)
                continue
            result = next(results)
            self._warn(hook, result.unknown)
            state.record(hook, result, event)
            self._carry(hook, result, table)
        together.clear()

    def _one(self, hook: EventHook, event: Event, payload: dict[str, Any],
             table: dict[str, Any], state: Tally, pipelines: dict[str, dict[str, Any]],
             cancel: threading.Event | None, journal: Entry | None = None,
             origin: Origin | None = None, part: int = 0) -> None:
        ready = self._prepare(hook, event, payload, table, state, pipelines, cancel, origin,
                              part)
        if ready is None:
            return
        call, step = ready
        if not hook.wait:
            state.record(hook, once(journal, step, lambda: self._start(call),
                                    lambda kept: replayed(kept, awaited=False),
                                    keep=lambda result: result.status), event)
            return
        result = once(journal, step, lambda: attempts(call), replayed, keep=jsonview.view)
        self._warn(hook, result.unknown)
        state.record(hook, result, event)
        self._carry(hook, result, table)

    def _prepare(self, hook: EventHook, event: Event, payload: dict[str, Any],
                 table: dict[str, Any], state: Tally, pipelines: dict[str, dict[str, Any]],
                 cancel: threading.Event | None, origin: Origin | None = None,
                 part: int = 0) -> tuple[Call, str] | None:
        """The hook's call and its journal step, or None when its filters or ``when`` skip
        it (a ``when`` that cannot be evaluated is its error, in ``state``); ``part``: which
        view of the event (Firing.views) the payload is, its step's own."""
        if not applies(hook, payload):
            return None
        call = Call(hook=hook, event=event.name, payload=payload, variables=dict(table),
                    env=variables.environment(self.ctx.env, table),
                    workspace=self.ctx.workspace, state_dir=self.ctx.state_dir,
                    account=self.ctx.account,
                    grace=self.ctx.grace, cancel=cancel, pipelines=pipelines,
                    log=self.ctx.log, limits=hook.limits.over(self.ctx.limits), stdin={},
                    guards=self.cache.guards, origin=origin)
        if (made := prepared(DIALECTS[hook.dialect], call)) is None:
            return None  # (its dialect's way: not this hook's call)
        call = made
        if hook.when is not None:
            try:
                if not hook.when(call.value):
                    return None
            except ConditionError as err:
                state.error(hook, f"when: {hook.when.text!r} cannot be evaluated: {err}")
                return None
        # its step: the view's number, the file quoted (no name makes one step another's)
        return call, hook.where + (f" #{part + 1}" if part else "") + (
            f" {json.dumps(payload['file'])}" if "file" in payload else "")

    def _refused(self, hook: EventHook) -> str | None:
        """Why trust refuses ``hook`` (enforced, a workspace hook not approved as it is
        now), or None."""
        if self.ctx.trust is None or not hook.workspace:
            return None
        return self.ctx.trust.refused(for_event_hook(hook))

    def _start(self, call: Call) -> ActionResult:
        """A fire-and-forget action started (owned by Background), or why not."""
        if self.background.start(call, self._finished):
            return ActionResult(Status.STARTED)
        return ActionResult(Status.ERROR, error=f"{BACKGROUND_LIMIT} fire-and-forget actions "
                            "are still running: this one was not started")

    @staticmethod
    def _carry(hook: EventHook, result: ActionResult, table: dict[str, Any]) -> None:
        """What the hooks after this one see of it."""
        table.update(LAST_HOOK_STATUS="success" if result.status == Status.OK else "failed")
        if result.response is not None:
            table["HOOK_RESPONSE" if hook.action == "webhook" else "SPAWN_OUTPUT"] = \
                result.response

    def _finished(self, call: Call, result: ActionResult) -> None:
        """A fire-and-forget action is done: logged, and its line in the session's events."""
        self._warn(call.hook, result.unknown)
        level = self.ctx.log.info if result.status == Status.OK else self.ctx.log.warning
        level("background hook done", hook=call.hook.where, status=result.status,
              exit_code=result.exit_code, error=result.error)
        state = Tally(kinds.BY_NAME[call.event], DIALECTS)
        state.record(call.hook, result, state.event)
        outcome = Outcome(call.event, False, None, None, None, False, state.results)
        self._record(lambda sessions: sessions.end(None, outcome.as_json(), call.payload))

    def _warn(self, hook: EventHook, unknown: tuple[str, ...]) -> None:
        for placeholder in unknown:
            if (hook.where, placeholder) not in self._warned:
                self._warned.add((hook.where, placeholder))
                self.ctx.log.warning("placeholder has no value: left as written",
                                     hook=hook.where, placeholder=placeholder)

    def shutdown(self, status: str | None = None) -> None:
        """Stop what runs in the background; close the session's record as ``status``."""
        self.background.stop()
        if status is not None:
            self._record(lambda sessions: sessions.close(status))

