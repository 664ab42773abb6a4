"""What the control API does, without HTTP: turns, cancel, rerun, status, output, health.

One evaluation at a time: a turn that arrives while one runs is refused (the API's
409), never queued behind it. The loop guard counts hook-triggered re-prompts per user
message (discobot's hooks spec's MAX_HOOK_RETRIES = 3). Each evaluation discovers the hooks afresh,
and when the pre-commit hooks have changed since the chain was last written (or this
service started), it is rewritten: by root over the link under initd, else here when
the repository already has initd's chain.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from initd.config.problems import Problem
from initd.errors import InitdError
from initd.events import wiring
from initd.events.engine import Engine
from initd.events.wire import Origin
from initd.hooks import filehooks, kinds, message, model, precommit
from initd.hooks.context import HookContext
from initd.hooks.discovery import Found
from initd.hooks.launch import refuse, run_one
from initd.hooks.ledger import Ledger
from initd.hooks.model import Hook
from initd.hooks.status.schema import Status
from initd.process import runner
from initd.process.runner import Result
from initd.service import counts, started, views
from initd.service.link import LinkDown, SupervisorLink
from initd.state.idempotency import digest
from initd.state.journal import LOST, Entry, Journal, Unkept, once
from initd.state.ready import readiness, services_health
from initd.state.snapshot import Snapshot

GUARD_STEPS = "loop-guard.steps"  # the loop guard's ledger, in the journal's directory


class Busy(Exception):
    """An evaluation (or a rerun) is already running."""


class HookService:
    def __init__(self, ctx: HookContext, image_dir: str, max_attempts: int = 3,
                 link: SupervisorLink | None = None, events: Engine | None = None,
                 command: list[str] | None = None, guards: Snapshot | None = None) -> None:
        self.ctx = ctx
        self.image_dir = image_dir
        self.link = link  # None: run by hand, no supervisor, no agent to speak of
        self.events = events or wiring.for_context(ctx, image_dir, command, guards)
        # what each request with an Idempotency-Key ran: a repeat never runs a hook twice
        place = ctx.state.child(ctx.session_id, "journal")
        self.journal = Journal(place, ctx.log.warning)
        self.journal.check()  # one that cannot be written is the health's problem at once
        # the re-prompts since the last user turn: the turns' own steps (hooks/ledger.py),
        # so a killed service goes on from them, and a turn sent again counts once
        self.guard = message.LoopGuard(max_attempts, Ledger(place, GUARD_STEPS,
                                                            ctx.log.warning))
        self._lock = threading.Lock()
        self._cancel: threading.Event | None = None
        self._precommit: tuple[tuple[str, str, str], ...] | None = None  # as last written
        self._said: set[Problem] = set()  # (_unread)
        self.counts = counts.Counter()  # for root's /metrics, sent over the link
        if link is not None:
            counts.report(link.channel.send, self.counts)

    def discover(self) -> Found:
        """Re-read on every call, hooks added since are picked up at once; and every file
        hook of the session's start (its guard snapshot) is there as it was then: one the
        agent removed, or made another kind, still runs (invariant 15)."""
        return started.discover(self.ctx.workspace, self.image_dir, self.events.cache.guards)

    def status(self) -> Status:
        return self.ctx.store.read()

    def output(self, hook_id: str) -> str | None:
        if not model.ID.fullmatch(hook_id):
            return None  # not a hook id, so no hook's log (and never a path)
        try:
            raw = self.ctx.store.read_log(hook_id)
        except FileNotFoundError:
            return None
        return None if raw is None else raw.decode(errors="replace")

    def turn(self, trigger: str, key: str | None = None) -> dict[str, Any]:
        """Evaluate the file hooks after a completed turn; raises Busy if one runs. A
        turn sent again with its ``key`` gets its answer again, and no hook runs twice
        for it (initd/state/journal/)."""
        with self.journal.entry("turn", key, digest({"trigger": trigger})) as entry:
            if entry is not None and entry.answer is not None:
                return {**entry.answer, "replayed": True, "journaled": True}
            if not self._lock.acquire(blocking=False):
                raise Busy
            try:
                if trigger == "user":
                    self.guard.user_turn(entry)
                self._cancel = threading.Event()
                found = self.discover()
                self._refresh_precommit(found)
                gate = started.checked(None if entry is None else self._gate(entry),
                                       self.events.cache.guards, self.ctx)
                evaluation = filehooks.evaluate(found.hooks, self.ctx, cancel=self._cancel,
                                                gate=gate)
                answer = {**self._answer(evaluation, entry),
                          "problems": self._unread(found)}
            finally:
                self._cancel = None
                self._lock.release()
            if entry is not None:
                entry.answered(answer)
            self.counts.turn(answer)
            return {**answer, "replayed": False,
                    "journaled": self._journaled(entry, self.guard.steps)}

    def trust_verdict(self, key: str, digest: str) -> str | None:
        """None when a person approved ``digest`` for ``key``, else why not, for whoever
        asks (``POST /v1/trust``: the agent): root's word (the store is its alone) under a
        supervisor, else the store's, read here; either way only about this hook, in the
        words of hooks/trust.py's UNAPPROVED, whatever the store holds."""
        if self.link is not None and os.geteuid() != 0:
            return self.link.trust_verdict(key, digest)
        from initd.hooks.trust import UNAPPROVED, Trust

        trust = self.ctx.trust or Trust(enforce=True)
        return None if trust.approves(key, digest)[0] else UNAPPROVED

    def _unread(self, found: Found) -> list[str]:
        """Hooks directories not read whole (a file hook among the rest did not run):
        in every turn's answer, and said in the log once per directory and reason."""
        for problem in found.unread:
            if problem not in self._said:
                self._said.add(problem)
                self.ctx.log.error("hooks directory not read whole", directory=problem.path,
                                   reason=problem.reason)
        return [str(problem) for problem in found.unread]

    def _gate(self, entry: Entry) -> filehooks.Gate:
        """Each file hook once per turn: its recorded result when an earlier delivery
        ran it; refused (it stays pending) when that delivery was killed while it ran."""
        def gate(hook: Hook, go: Callable[[], Result]) -> Result:
            def again(outcome: Any) -> Result:
                if isinstance(outcome, dict):
                    try:
                        return runner.from_wire(outcome)
                    except (KeyError, TypeError, ValueError):
                        pass  # not what we wrote: it ran once all the same
                why = outcome.why if isinstance(outcome, Unkept) else LOST.why
                return refuse(hook, self.ctx, f"{why}, and is not run again for this turn "
                              "(it stays pending for the next)")
            return once(entry, f"hook {hook.id}", go, again, keep=runner.to_wire)
        return gate

    def fire(self, name: str, payload: dict[str, Any], key: str | None = None,
             origin: Origin | None = None) -> dict[str, Any]:
        """A lifecycle event from the agent: its hooks, of every dialect (events/), as
        the outcome's JSON. Sent again with its ``key``, it gets its outcome again, and
        no hook runs twice for it. ``origin``: what an agent sent in its own shape."""
        if kinds.resolve(name) is None:
            return self.events.fire(name, payload).as_json()  # (UnknownEvent)
        with self.journal.entry("event", None if key is None else f"{name}\0{key}",
                                digest(payload)) as entry:
            if entry is not None and entry.answer is not None:
                self.counts.replayed()
                return {**entry.answer, "replayed": True, "journaled": True}
            outcome = self.events.fire(name, payload, journal=entry, origin=origin).as_json()
            if entry is not None:
                entry.answered(outcome)
            journaled = self._journaled(entry, self.events.stops.steps)
            self.counts.event(outcome, journaled)
            return {**outcome, "replayed": False, "journaled": journaled}

    @staticmethod
    def _journaled(entry: Entry | None, steps: Ledger) -> bool:
        """Every step of the request is in the journal (and its counts in the ledger): sent
        again, it runs no hook twice. False without a key, or when they could not be kept."""
        return entry is not None and entry.written and steps.trouble is None

    def kept_problems(self) -> list[str]:
        """Why exactly once is at least once now (the health's problems): the journal or
        a ledger that cannot be written."""
        ledgers = (self.guard.steps, self.events.stops.steps)
        return [why for why in (self.journal.trouble, *(s.trouble for s in ledgers)) if why]

    def close(self) -> None:
        """The service stops: fire-and-forget hooks are stopped, and the session's record
        ends as the agent did (0: completed; a signal: interrupted; else failed)."""
        code = (self.link.state.get("agent") or {}).get("lastExitCode") if self.link else 0
        status = ("interrupted" if not isinstance(code, int) or code >= 128
                  else "completed" if code == 0 else "failed")
        self.events.shutdown(status)

    def health(self) -> dict[str, Any]:
        """Liveness: this service answers ("degraded" when it cannot keep its state:
        alive all the same, and a probe passes); what the supervisor last said of initd
        and the agent comes along (null when no supervisor runs this service)."""
        state = self.link.state if self.link is not None else {}
        mine = {**(state.get("service") or {}), "state": "running", "ready": True,
                "pid": os.getpid()}
        problems = [self.ctx.state_problem] if self.ctx.state_problem else []
        problems += (state.get("initd") or {}).get("problems") or []  # the supervisor's
        problems += self.kept_problems()  # the journal's
        down, said = services_health(state)  # the image's services (state/ready.py)
        return {"status": down if down == "failed" else "degraded" if problems or down
                else "ok", "problems": problems + said, "pid": os.getpid(),
                "initd": state.get("initd"), "agent": state.get("agent"), "service": mine,
                **({"services": state["services"]} if state.get("services") else {})}

    def readiness(self) -> tuple[bool, str, Any]:
        """(ready, why, the agent's state): ready once the supervisor has seen the agent
        ready, and not while initd stops (so a load balancer stops sending first)."""
        if self.link is None:
            return True, "no agent is supervised by this service", None
        agent = self.link.state.get("agent")
        if self.link.down:
            return False, "initd's supervisor is gone: the container is stopping", agent
        ready, why = readiness(self.link.state)
        return ready, why, agent

    def _refresh_precommit(self, found: Found) -> None:
        """Rewrite the pre-commit chain when the pre-commit hooks changed (the first
        evaluation of every service always does: hooks may have changed before it ran)."""
        now = tuple((h.id, h.name, h.path) for h in found.hooks if h.type == "pre-commit")
        if now == self._precommit:
            return
        try:
            if self.link is not None:
                rewritten, done = self.link.refresh_precommit()
                if not rewritten:  # (root never will for these hooks: not asked again)
                    self._precommit = now
                    self.ctx.log.info("pre-commit chain not rewritten", why=done)
                    return
            else:
                repo = precommit.Repo.find(self.ctx.workspace)
                if repo is None or not precommit.is_managed(repo.hook):
                    done = "no managed pre-commit chain in this workspace"
                else:
                    done = precommit.install(repo, found.hooks,
                                             session_id=self.ctx.session_id)
        except (LinkDown, InitdError, OSError) as err:
            self.ctx.log.warning("pre-commit chain not refreshed (tried again next turn)",
                                 error=str(err))
            return
        self._precommit = now
        self.ctx.log.info("pre-commit chain rewritten", result=done)

    def cancel(self) -> bool:
        """Stop the running evaluation (its hook's whole group); pending stays pending."""
        cancel = self._cancel
        if cancel is None:
            return False
        cancel.set()
        return True

    def rerun(self, hook_id: str) -> dict[str, Any] | None:
        """Run one hook now (a file hook against the dirty files its pattern matches).
        Raises Busy while an evaluation or another rerun runs: one hook at a time, so no
        hook ever runs twice at once over its own log."""
        hook = next((h for h in self.discover().hooks if h.id == hook_id), None)
        if hook is None:
            return None
        if not self._lock.acquire(blocking=False):
            raise Busy
        try:
            why = started.changed(hook, self.events.cache.guards)
            result = (refuse(hook, self.ctx, why, fixable=True) if why is not None else
                      filehooks.run_on_dirty(hook, self.ctx) if hook.type == "file"
                      else run_one(hook, self.ctx))
        finally:
            self._lock.release()
        return views.rerun(hook, result)

    def _answer(self, evaluation: filehooks.Evaluation, entry: Entry | None = None
                ) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "action": "none", "message": None, "attempt": None,
            "maxAttempts": self.guard.limit, "evaluation": evaluation.action,
            "results": [views.ran(ran) for ran in evaluation.ran],
            "pending": list(evaluation.pending)}
        failed = evaluation.failed
        if evaluation.action == filehooks.Action.REPROMPT and failed is not None:
            # sent again: the attempt it was given (None: the guard said no), not another
            attempt = self.guard.next_attempt(entry)
            if attempt is None:
                answer["evaluation"] = "loop-guard"  # pending stays for the next user turn
            else:
                answer.update(action="reprompt", attempt=attempt, message=message.failure(
                    failed.hook, failed.files, failed.result, attempt, self.guard.limit))
        return answer

