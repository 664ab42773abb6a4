"""What an event hook does: run a command (initd's templated, or Claude Code's as written)
or a script, call a webhook, spawn a child
pipeline, commit or push. Each action takes a ``Call`` and returns an ``ActionResult``;
what the result *means* (block, abort, retry) is the engine's to decide."""

from __future__ import annotations

import enum
import threading
from typing import Any, NamedTuple

from initd.config.log import Logger
from initd.events import templates
from initd.events.model import (
    AgentCommand,
    Command,
    EventHook,
    Exec,
    GitCommit,
    GitPush,
    HttpHook,
    Script,
    Shell,
    Webhook,
)
from initd.events.wire import Origin
from initd.process.limits import Limits
from initd.process.users import Account
from initd.state import jsonview
from initd.state.journal import LOST, Unkept
from initd.state.snapshot import Snapshot


class Call(NamedTuple):
    """One action about to run, with everything it may read."""

    hook: EventHook
    event: str  # canonical
    payload: dict[str, Any]  # the event as the agent sent it (plus "file" for {file})
    variables: dict[str, Any]  # the upper-case table: SESSION, ITERATION, HOOK_RESPONSE, …
    env: dict[str, str]  # the hook's environment: initd's (no secrets) and the table
    workspace: str
    state_dir: str  # ~/.discobot/<session>/events: children of spawn live here
    account: Account | None  # who hooks run as (None: this process's user)
    grace: float
    cancel: threading.Event | None
    limits: Limits  # the hook's own over the image's
    pipelines: dict[str, dict[str, Any]]  # spawn's child pipelines, by name
    log: Logger
    stdin: dict[str, Any]  # the event as the hook reads it on stdin (its Dialect.stdin)
    guards: Snapshot | None = None  # the session's guard snapshot (a script is run as it was)
    origin: Origin | None = None  # what the agent sent, as it sent it (initd emit --from)

    def lookup(self, kind: str, name: str) -> Any:
        """A placeholder's value: ``{{name}}`` from the payload (or the table, in lower
        case), ``${NAME}`` from initd's own table, then initd's environment, then the
        payload's names (so a payload cannot aim ``${SLACK_WEBHOOK}`` elsewhere),
        ``{file}`` the file."""
        if kind == "{}":
            return self.payload.get("file", templates.MISSING)
        if kind == "{{}}":
            if name in self.payload:
                return self.payload[name]
            return self.variables.get(name.upper(), templates.MISSING)
        if name in self.variables and (name not in self.env or self.env[name]
                                       == templates.text(self.variables[name])):
            return self.variables[name]  # (typed, for conditions) unless initd's env won
        return self.env.get(name, templates.MISSING)  # the environment beats the payload


    def value(self, name: str) -> Any:
        """``${NAME}`` for a condition: the table's (or the environment's) value, or null."""
        found = self.lookup("${}", name)
        return None if found is templates.MISSING else found


class Status(enum.StrEnum):
    """What became of one event hook (a result's ``status``)."""

    OK = "ok"
    FAILED = "failed"  # it ran and said no (a non-zero exit, a webhook's refusal)
    ERROR = "error"  # it could not run, or did not finish (timed out)
    STARTED = "started"  # fire-and-forget: started, not awaited
    UNTRUSTED = "untrusted"  # trust enforcement refused it
    BLOCKED = "blocked"  # the event was blocked by it (a result as the engine reports it)


class ActionResult(NamedTuple):
    status: Status
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    duration_ms: float = 0.0
    error: str | None = None  # why it could not run or did not finish, for people
    response: str | None = None  # HOOK_RESPONSE (a webhook) or SPAWN_OUTPUT (a spawn)
    aborted: bool = False  # a webhook's on_timeout: abort
    unknown: tuple[str, ...] = ()  # placeholders that had no value (left as written)
    # stdout shows at most 64 KiB (head and tail); the hook's JSON answer is read whole:
    answer: str | None = None  # all of stdout, when it may be a JSON answer and is longer
    cut: bool = False  # stdout was over answers.ANSWER_LIMIT: its answer cannot be read
    # an error of initd's (an answer it could not read, an environment exec refused): it
    # blocks a blockable event whatever on_error says (invariant 12: guards fail closed)
    fails_closed: bool = False


def run(call: Call) -> ActionResult:
    """The hook's action, given its own typed fields."""
    from initd.events.actions import claudehttp, process, spawn, webhook

    spec = call.hook.spec
    if isinstance(spec, Shell):
        return process.shell(call, spec)
    if isinstance(spec, Command | Exec | AgentCommand):
        return process.command(call, spec)
    if isinstance(spec, HttpHook):
        return claudehttp.send(call, spec)
    if isinstance(spec, Script):
        return process.script(call, spec)
    if isinstance(spec, GitCommit):
        return process.git_commit(call, spec)
    if isinstance(spec, GitPush):
        return process.git_push(call, spec)
    if isinstance(spec, Webhook):
        return webhook.send(call, spec)
    return spawn.spawn(call, spec)


def replayed(outcome: Any, awaited: bool = True) -> ActionResult:
    """What an earlier delivery of this request did with a hook (journal.once): its
    recorded result, or an error when it is not known (killed before recording, or not
    kept: journal.Unkept), which fails closed when the hook was ``awaited``."""
    if isinstance(outcome, str) and outcome in ("started", "error"):  # fire-and-forget
        return ActionResult(Status(outcome), error="started by an earlier delivery of "
                            "this event: not started again" if outcome == "started" else
                            "not started by an earlier delivery of this event")
    if isinstance(outcome, dict):
        try:
            fields = {name: outcome[view] for name, view in _VIEWS.items() if view in outcome}
            fields["status"] = Status(fields["status"])
            fields["unknown"] = tuple(fields.get("unknown") or ())
            return ActionResult(**fields)
        except (KeyError, TypeError, ValueError):
            pass  # not what we wrote: the step still ran once, and is not run again
    why = outcome.why if isinstance(outcome, Unkept) else LOST.why
    # it may have run, and said no: a blockable event is blocked (invariant 12), never let
    # through because initd does not know what its guard said
    return ActionResult(Status.ERROR, error=f"{why}, and is not run again for this event",
                        fails_closed=awaited)


_VIEWS = {name: jsonview.camel(name) for name in ActionResult._fields}

