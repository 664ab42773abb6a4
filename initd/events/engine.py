"""Fire one event: run its hooks in order and say what the agent should do (DESIGN.md §6).

For each hook of the event, in the order they load (dialects/__init__.py):

1. filters: a loop's hooks only for its ``stage``; ``tool_name`` (a comma list, any case)
   against the payload's tool; ``pattern`` (``*.ext`` list, path substring, or glob)
   against its ``file``/``files``: a command with ``{file}`` runs once per file;
2. trust: with enforcement on, a workspace hook not approved as it is now does not run;
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

The first block ends the event. For ``pre_iteration`` the hooks' output, concatenated raw
in order with failures as text (iteratr's way), is the context for the agent's prompt.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

from initd.events import templates
from initd.events.actions import ActionResult, Call
from initd.events.background import Background, attempts
from initd.events.conditions import ConditionError
from initd.events.dialects import Cache
from initd.events.filters import applies, files_for
from initd.events.model import EventHook
from initd.events.sessions import Sessions
from initd.events.setup import Setup
from initd.events.trust import for_event_hook
from initd.hooks import kinds
from initd.hooks.kinds import Event
from initd.hooks.status import now_iso

BACKGROUND_LIMIT = 16  # fire-and-forget actions running at once; more are refused
CONTEXT_EVENTS = ("pre_iteration",)


class UnknownEvent(LookupError):
    pass


class Outcome(NamedTuple):
    event: str
    blocked: bool
    reason: str | None
    feedback: str | None
    context: str | None
    aborted: bool
    results: list[dict[str, Any]]

    def as_json(self) -> dict[str, Any]:
        return self._asdict()


class Engine:
    def __init__(self, setup: Setup, cache: Cache, sessions: Sessions | None = None) -> None:
        self.setup = setup
        self.cache = cache
        self.background = Background(BACKGROUND_LIMIT, setup.log)
        self.sessions = sessions  # the session's record: every event and its outcome
        self._warned: set[tuple[str, str]] = set()

    def fire(self, name: str, payload: dict[str, Any],
             cancel: threading.Event | None = None) -> Outcome:
        event = kinds.resolve(name)
        if event is None:
            raise UnknownEvent(f"no event {name!r} (known: {kinds.known()})")
        found = self.cache.get()
        hooks = [h for h in found.hooks if h.event == event.name]
        table = variables(event, payload, self.setup)
        marker = self._record(lambda sessions: sessions.begin(event.name)) if hooks else None
        state = _State(event)
        for hook in hooks:
            if state.stopped:
                break
            for file in files_for(hook, payload):
                self._one(hook, event, payload if file is None else {**payload, "file": file},
                          table, state, found.pipelines, cancel)
                if state.stopped:
                    break
        outcome = Outcome(event.name, state.blocked, state.reason, state.feedback,
                          "\n".join(state.context) if event.name in CONTEXT_EVENTS else None,
                          state.aborted, state.results)
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
            self.setup.log.error("session record not written", error=str(err))
            return None

    def _one(self, hook: EventHook, event: Event, payload: dict[str, Any],
             table: dict[str, Any], state: _State, pipelines: dict[str, dict[str, Any]],
             cancel: threading.Event | None) -> None:
        if not applies(hook, payload):
            return
        if self.setup.trust is not None and hook.workspace:
            entry = for_event_hook(hook)
            if not self.setup.trust.allows(entry):
                state.error(hook, self.setup.trust.why_not(entry), "untrusted")
                return
        call = Call(hook=hook, event=event.name, payload=payload, variables=dict(table),
                    env=_environment(self.setup.env, table), workspace=self.setup.workspace,
                    state_dir=self.setup.state_dir, account=self.setup.account,
                    grace=self.setup.grace, cancel=cancel, pipelines=pipelines,
                    log=self.setup.log)
        if hook.when is not None:
            try:
                if not hook.when(call.value):
                    return
            except ConditionError as err:
                state.error(hook, f"when: {hook.when.text!r} cannot be evaluated: {err}")
                return
        if not hook.wait:
            started = self.background.start(call, self._finished)
            state.record(hook, ActionResult("started" if started else "error", error=None
                         if started else f"{BACKGROUND_LIMIT} fire-and-forget actions are "
                         "still running: this one was not started"), event)
            return
        result = attempts(call)
        self._warn(hook, result.unknown)
        state.record(hook, result, event)
        table.update(LAST_HOOK_STATUS="success" if result.status == "ok" else "failed")
        if result.response is not None:
            table["HOOK_RESPONSE" if hook.action == "webhook" else "SPAWN_OUTPUT"] = \
                result.response

    def _finished(self, call: Call, result: ActionResult) -> None:
        """A fire-and-forget action is done: logged, and its line in the session's events."""
        self._warn(call.hook, result.unknown)
        level = self.setup.log.info if result.status == "ok" else self.setup.log.warning
        level("background hook done", hook=call.hook.where, status=result.status,
              exit_code=result.exit_code, error=result.error)
        state = _State(kinds.BY_NAME[call.event])
        state.record(call.hook, result, state.event)
        outcome = Outcome(call.event, False, None, None, None, False, state.results)
        self._record(lambda sessions: sessions.end(None, outcome.as_json(), call.payload))

    def _warn(self, hook: EventHook, unknown: tuple[str, ...]) -> None:
        for placeholder in unknown:
            if (hook.where, placeholder) not in self._warned:
                self._warned.add((hook.where, placeholder))
                self.setup.log.warning("placeholder has no value: left as written",
                                       hook=hook.where, placeholder=placeholder)

    def shutdown(self, status: str | None = None) -> None:
        """Stop what runs in the background; close the session's record as ``status``."""
        self.background.stop()
        if status is not None:
            self._record(lambda sessions: sessions.close(status))


class _State:
    """What the hooks of one event have said so far."""

    def __init__(self, event: Event) -> None:
        self.event = event
        self.blocked = self.aborted = False
        self.reason: str | None = None
        self.feedback: str | None = None
        self.context: list[str] = []
        self.results: list[dict[str, Any]] = []

    @property
    def stopped(self) -> bool:
        return self.blocked or self.aborted

    def error(self, hook: EventHook, message: str, status: str = "error") -> None:
        self.record(hook, ActionResult(status, error=message), self.event)

    def record(self, hook: EventHook, result: ActionResult, event: Event) -> None:
        decision, reason, feedback = _decision(result)
        note = result.error
        blocks = False
        if result.status in ("error", "untrusted"):
            blocks = event.blockable and (hook.on_error == "deny")
            reason = f"{hook.label}: {result.error}"
        elif decision == "block" or (decision is None and (  # an explicit answer wins
                (result.exit_code == 2 and hook.exit2_blocks)
                or (hook.block and result.status == "failed"))):
            if event.blockable:
                blocks = True
                reason = reason or (result.stderr.strip() or result.stdout.strip()
                                    or f"blocked by {hook.label} (exit {result.exit_code})")
            else:
                note = note or f"asked to block, but {event.name} cannot be blocked"
        if event.name in CONTEXT_EVENTS:
            text = _context_text(hook, result)
            if text:  # a hook that printed nothing adds no empty line (as iteratr does)
                self.context.append(text)
        self.results.append({
            "hook": hook.where, "dialect": hook.dialect, "action": hook.action,
            "command": hook.label, "status": "blocked" if blocks else result.status,
            "exit_code": result.exit_code, "stdout": result.stdout, "stderr": result.stderr,
            "timed_out": result.timed_out, "duration_ms": result.duration_ms,
            "decision": decision, "error": note})
        if blocks:
            self.blocked, self.reason = True, reason
            self.feedback = feedback or (result.stderr.strip() if event.name in (
                "teammate_idle", "task_completed") else None) or self.feedback
        elif decision == "approve" and reason and self.reason is None:
            self.reason = reason
        if feedback and not blocks:
            self.feedback = feedback
        if result.aborted or (hook.on_failure == "abort" and result.status != "ok"
                              and result.status != "started"):
            self.aborted = True
            self.reason = self.reason or f"{hook.label} failed (on_failure: abort)"


def _decision(result: ActionResult) -> tuple[str | None, str | None, str | None]:
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
    decision = data.get("decision") if data.get("decision") in ("block", "approve") else None
    reason, feedback = data.get("reason"), data.get("feedback")
    return (decision, reason if isinstance(reason, str) else None,
            feedback if isinstance(feedback, str) else None)


def _context_text(hook: EventHook, result: ActionResult) -> str:
    """iteratr's raw output, and its words for what went wrong."""
    text = result.stdout
    if result.timed_out:
        return f"{text}[Hook timed out after {hook.timeout:g}s]"
    if result.status in ("error", "untrusted"):
        return f"{text}[Hook command failed: {result.error}]"
    if result.status == "failed":
        stderr = f"\n[stderr]\n{result.stderr}" if result.stderr else ""
        return f"{text}[Hook command failed: exit status {result.exit_code}]{stderr}"
    return text.rstrip("\n")


# initd's own names in the table: what a hook reads there is initd's, never the payload's.
OWN = ("EVENT", "SESSION", "WORKSPACE", "TIMESTAMP", "LAST_HOOK_STATUS", "HOOK_RESPONSE",
       "SPAWN_OUTPUT")
# Names a payload key never sets in a hook's environment, even when initd's has none: they
# change what a process loads or runs (PATH, LD_PRELOAD, BASH_ENV, GIT_DIR, PYTHONPATH…)
# or who it thinks it is. The value still reaches a placeholder (``${LD_PRELOAD}``),
# through a reference of its own (templates.shell).
UNSAFE = frozenset({"PATH", "HOME", "USER", "LOGNAME", "SHELL", "IFS", "ENV", "BASH_ENV",
                    "SHELLOPTS", "BASHOPTS", "CDPATH", "GLOBIGNORE", "PS4", "PROMPT_COMMAND",
                    "TMPDIR", "NODE_OPTIONS", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT",
                    "RUBYLIB", "GCONV_PATH", "HOSTALIASES", "LOCPATH", "NLSPATH", "TZ"})
UNSAFE_PREFIXES = ("LD_", "GIT_", "PYTHON", "DYLD_", "BASH_FUNC", "INITD_", "DISCOBOT_",
                   "SSH_", "LC_", "LANG")


def variables(event: Event, payload: dict[str, Any], setup: Setup) -> dict[str, Any]:
    """agent-pipelines' variable table: what initd knows, and the payload's keys in
    UPPER_SNAKE (``issueNumber`` is ISSUE_NUMBER), which never replace initd's own."""
    table: dict[str, Any] = {"EVENT": event.name, "SESSION": setup.session_id,
                             "WORKSPACE": setup.workspace, "TIMESTAMP": now_iso(),
                             "LAST_HOOK_STATUS": "", "HOOK_RESPONSE": "", "SPAWN_OUTPUT": ""}
    for key, value in payload.items():
        name = re.sub(r"\W", "_", kinds.snake(str(key))).upper()
        if name and not name[0].isdigit() and name not in OWN:
            table[name] = value
    return table


def exportable(name: str) -> bool:
    """May a payload's key become a variable of a hook's environment?"""
    return name not in UNSAFE and not name.startswith(UNSAFE_PREFIXES)


def _environment(base: dict[str, str], table: dict[str, Any]) -> dict[str, str]:
    """The hook's environment: the payload's names under initd's environment (which wins:
    an event cannot replace PATH or HOME), initd's own names over both. A value holding
    a NUL byte cannot be an environment variable: it is left out (the hook still has the
    whole payload on stdin)."""
    texts = {k: templates.text(v) for k, v in table.items()}
    given = {k: v for k, v in texts.items() if k not in OWN and exportable(k)}
    own = {k: v for k, v in texts.items() if k in OWN}
    return {k: v for k, v in {**given, **base, **own}.items() if "\0" not in v}
