"""``initd emit --from AGENT [EVENT]``: one line in an agent's own hook config (``initd
shim AGENT`` prints it) that puts each of its events to initd's hooks, of every format,
and answers as a hook of that agent answers (events/wire.py): its exit code, its JSON on
stdout, its reason on stderr.

The payload is the agent's hook input, on stdin, as the agent writes it; the event is the
one it names (EVENT, when given, wins). initd's hooks could not be asked (no service, its
error, a payload it could not take): a blockable event gets the agent's own "blocked"
answer (invariant 12: a guard that saw nothing never reads as "allowed"), any other
event exit 1 with the reason (every agent reads it as a hook's error, not a block), or
the agent's own warning where its wire has one (events/wire.Unasked: Codex's): a Stop
too, whose block would keep the agent working, never guard it. A
payload that is no JSON object, or names no event of the agent's, is exit 2 with the
reason on stderr: what the agent asked cannot be known, so it is not allowed.

What the agent's wire ``passes`` of this process's environment for the event (Claude
Code's CLAUDE_ENV_FILE on SessionStart, Setup, CwdChanged and FileChanged) goes with the
event (``?env=NAME=VALUE``): the agent's own hooks initd runs get it in their environment
and write to it themselves, as the agent user, as a hook of the agent would."""

from __future__ import annotations

import json
import os
import sys
import urllib.parse

from initd.commands import client
from initd.errors import InitdError
from initd.events.wire import (
    Inbound,
    Reply,
    Unasked,
    Wire,
    WireError,
    blocked_outcome,
    passed_on,
)
from initd.hooks import kinds

# blockable, but a block there is "keep working", not a guard's "no": an agent whose Stop
# initd cannot ask about stops (with the reason), rather than loop until a person comes
NOT_GUARDS = ("stop", "subagent_stop", "teammate_idle", "task_completed")


def emit_from(agent: str, event: str | None, sock: str | None, key: str | None) -> int:
    from initd.events import wires
    from initd.events.sources import AGENTS

    wire = wires.wire(agent)
    if wire is None:
        return _said(Reply(125, "", f"initd: --from: no agent {agent!r} (known: "
                           f"{', '.join(AGENTS)})\n"))
    try:
        payload = json.loads(sys.stdin.buffer.read() or b"{}")
    except (ValueError, RecursionError) as err:
        return _said(Reply(2, "", f"initd: the {agent} hook input is no JSON initd can read "
                           f"({type(err).__name__}): not allowed\n"))
    if not isinstance(payload, dict):
        return _said(Reply(2, "", f"initd: the {agent} hook input is not a JSON object: "
                           "not allowed\n"))
    try:
        came = wire.inbound(payload, event)
    except WireError as err:
        return _said(Reply(2, "", f"initd: {err}: not allowed\n"))
    return _said(_ask(wire, came, sock, client.new_key() if key is None else key))


def _ask(wire: Wire, came: Inbound, sock: str | None, key: str) -> Reply:
    blockable = kinds.BY_NAME[came.event].blockable
    query = [("from", wire.agent), *(("env", f"{name}={value}") for name, value
                                     in passed_on(wire, came.event, os.environ))]
    path = (f"/v1/events/{urllib.parse.quote(came.origin.name, safe='')}?"
            f"{urllib.parse.urlencode(query)}")
    try:
        code, answer = client.call("POST", path, came.origin.payload, sock=sock, key=key)
    except InitdError as err:
        return _unasked(wire, came, blockable, f"its hooks could not be asked: {err}")
    if code != 200 or not isinstance(answer, dict):
        why = (f"the hook service did not put the event to its hooks (HTTP {code}: "
               f"{client.reason(answer).removeprefix('initd: ')})")
        return _unasked(wire, came, blockable, why)
    return wire.reply(came, answer)


def _unasked(wire: Wire, came: Inbound, blockable: bool, why: str) -> Reply:
    if blockable and came.event not in NOT_GUARDS:
        return wire.reply(came, blocked_outcome(f"initd: {why}"))
    if isinstance(wire, Unasked):  # the agent's own warning (Codex's, Gemini CLI's)
        return wire.unasked(came, f"initd: {why}")
    return Reply(1, "", f"initd: {why}\n")


def _said(reply: Reply) -> int:
    sys.stdout.write(reply.stdout)
    sys.stdout.flush()
    sys.stderr.write(reply.stderr)
    return reply.code
