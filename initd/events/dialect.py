"""One Dialect protocol, as pre-commit has one Language: everything the engine asks of a
hook format, so that nothing outside a dialect's own module asks which format a hook is
in. A dialect loads its hooks (``load``), names the files that loading reads (``files``:
a change to one is a reload), says what its hooks read on stdin (``stdin``) and what a
result means (``verdict``), and answers two questions of its rules:

- ``together``: its matched hooks all run, at once, even after one blocked (their blocks'
  reasons are joined): Claude Code's;
- ``stdin_only``: its hooks read the event on stdin alone, no payload field becomes a
  variable in their environment, and a Stop's input says ``stop_hook_active``: Claude
  Code's;

and, when its agent calls hooks, how that agent calls initd (``wire``: events/wire.py).

``InitdRules`` is what the formats without rules of their own share. The registry, in the
order hooks run, is dialects/__init__.py's DIALECTS.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, runtime_checkable

from initd.events.actions import ActionResult, Call
from initd.events.loading import Collected
from initd.events.model import DialectName, EventHook
from initd.events.verdict import Meaning, Verdict, initd_verdict
from initd.events.wire import Wire
from initd.hooks.kinds import Event


class Where(NamedTuple):
    """Where a dialect looks for its files."""

    workspace: str
    image_dir: str  # the image's hooks directory (/etc/initd/hooks.d)
    home: str  # the agent user's home: its own config files (~/.config/nyzhi, ~/.claude)


class Dialect(Meaning, Protocol):
    name: DialectName
    title: str  # the format's own name, for people: "Claude Code"
    stdin_only: bool
    wire: Wire | None  # how its agent calls initd (initd emit --from NAME), if it does

    def load(self, where: Where) -> Collected:
        """Its hooks, and a problem (and a stand-in) for each one that did not load."""

    def files(self, where: Where) -> list[str]:
        """Every file ``load`` reads or could read."""

    def stdin(self, call: Call) -> dict[str, Any]:
        """The event as its hook reads it on stdin."""


@runtime_checkable
class Prepares(Protocol):
    """A dialect that makes each call of its hooks its own way before it runs (Cursor's:
    its variables in the environment; a hook of one of its events that the agent's
    event is not, though it is the same event of initd's)."""

    def prepare(self, call: Call) -> Call | None:
        """The call to run (its ``stdin`` is the dialect's already), or None: the hook
        does not run for it."""


def prepared(dialect: Dialect, call: Call) -> Call | None:
    """``call`` as the hook's ``dialect`` makes it: its stdin, then its own way
    (``Prepares``); None when the hook does not run for it."""
    call = call._replace(stdin=dialect.stdin(call))
    return dialect.prepare(call) if isinstance(dialect, Prepares) else call


class InitdRules:
    """initd's rules, for every format that has none of its own: the hooks of an event
    run one after another, the first block ends it, the payload's fields are variables,
    and a hook reads initd's common fields on stdin."""

    together = False
    stdin_only = False
    wire: Wire | None = None

    def stdin(self, call: Call) -> dict[str, Any]:
        return initd_input(call, call.event)

    def verdict(self, result: ActionResult, hook: EventHook, event: Event) -> Verdict:
        return initd_verdict(result, hook, event)


def initd_input(call: Call, name: str) -> dict[str, Any]:
    """The payload and the fields every format's hooks may rely on (AutoAgent's:
    eventName, sessionId, workspace, timestamp), initd's own winning over a payload's;
    ``name`` is the event's name in the format's own words."""
    return {**call.payload, "event": call.event, "eventName": name,
            "sessionId": call.variables.get("SESSION"), "workspace": call.workspace,
            "timestamp": call.variables.get("TIMESTAMP")}


def own_name(call: Call) -> str:
    """The event's name as the hook's file writes it: ``PreToolUse`` in
    ``hooks.PreToolUse[0]``."""
    return call.hook.key.split(".", 1)[-1].split("[", 1)[0] or call.event
