"""``initd emit EVENT [--data JSON|-]``: fire a lifecycle event and print what its hooks
decided. Exit 0, 2 when it is blocked (a Claude Code PreToolUse deny too; the reason on
stderr), 3 when a hook aborted it or a Claude Code hook said ``continue: false``.

A blockable event (pre_tool, Stop…) that the service could not put to its hooks (a
payload it cannot take, a refusal, its error, no service to ask) exits 2 as well: an
agent's harness reads any other failure as "go ahead", and no guard saw the action
(invariant 12). So does a key the service refuses: 422, the key of another request with
another body (its hooks were asked about that body, not this one), or 409, the key of a
request still running. Any other event exits 125 for those, with one line.

An ``--id`` that is no key (empty, a CR or LF, anything but printable ASCII) is a bad
command line, as a bad ``--data`` is: exit 125 with one line, for every event, before
anything is sent. It is never replaced by a key of ours, nor written into the request."""

from __future__ import annotations

import json
import sys
import urllib.parse
from collections.abc import Sequence

from initd.commands import client
from initd.commands.options import Parser, socket_option
from initd.errors import InitdError, UsageError
from initd.hooks import kinds


def emit(argv: Sequence[str]) -> int:
    """``initd emit EVENT [--data JSON|-]``: fire a lifecycle event; print the outcome.
    Exit 0, 2 when it is blocked (the reason on stderr), 3 when a hook aborted it (or
    said ``continue: false``: the agent stops)."""
    args = _parser().parse_args(argv)
    if args.agent is not None:
        from initd.commands.emitfrom import emit_from

        key = None if args.id is None else client.checked_key(args.id, "--id")
        return emit_from(args.agent, args.event, args.socket, key)
    if args.event is None:
        raise UsageError("the event's name is required (or --from AGENT)")
    event = kinds.resolve(args.event)
    blockable = event is not None and event.blockable
    text = sys.stdin.read() if args.data == "-" else args.data
    try:
        payload = json.loads(text or "{}")
    except ValueError as err:
        raise UsageError(f"--data: not valid JSON: {err}") from None
    except RecursionError:  # the payload is JSON initd cannot take: no guard would see it
        if blockable:
            return _blocked("the event's payload is nested too deep for initd to read; "
                            "no hook saw it")
        raise UsageError("--data: nested too deep for initd to read") from None
    if not isinstance(payload, dict):
        raise UsageError("--data: expected a JSON object")
    key = client.new_key() if args.id is None else client.checked_key(args.id, "--id")
    try:
        code, answer = client.call(
            "POST", f"/v1/events/{urllib.parse.quote(args.event, safe='')}", payload,
            sock=args.socket, key=key)
    except InitdError as err:  # no service, or none that answered whole, after the resends
        if blockable:
            return _blocked(f"its hooks could not be asked: {err}")
        raise
    if code != 200 and blockable:  # (413, 503, 500, 422, 409: the hooks were not asked)
        return _blocked(f"the hook service did not put the event to its hooks (HTTP "
                        f"{code}: {client.reason(answer).removeprefix('initd: ')})")
    client.refused_key(code, answer)  # 422, 409: one line, exit 125
    result = client.show(code, answer)
    if result != 0:
        return result
    if answer.get("continue") is False:  # a Claude Code hook: the agent stops (wins)
        print(f"initd: stop: {answer.get('stopReason') or 'continue: false'}",
              file=sys.stderr)
        return 3
    if answer.get("blocked"):  # a Claude Code PreToolUse deny too: the reason is its
        print(f"initd: blocked: {answer.get('reason')}", file=sys.stderr)
        return 2
    return 3 if answer.get("aborted") else 0


def _parser() -> Parser:
    p = Parser(prog="initd emit", description="Fire a lifecycle event (pre_tool, "
               "after_turn, PreExecutionStart, on_iteration_complete, …) and print what its "
               "hooks decided. Exit 2 when blocked (or denied, or a blockable event's "
               "hooks could not be asked), 3 when aborted (or a Claude Code hook said "
               "continue: false).")
    p.add_argument("event", nargs="?")
    p.add_argument("--data", metavar="JSON", default="{}",
                   help="the event's payload as a JSON object, or - to read it from stdin")
    p.add_argument("--from", dest="agent", metavar="AGENT",
                   help="the payload is AGENT's own hook input, on stdin (claude, codex, "
                   "gemini, cursor, vscode): its event is the one it names, and the answer "
                   "is a hook's of that agent (initd shim AGENT prints the config)")
    p.add_argument("--id", metavar="KEY", help="the event's Idempotency-Key: sent again "
                   "with the same key, its hooks do not run again (default: a new one, "
                   "and the event is sent again if the service dies while it runs)")
    socket_option(p)
    return p


def _blocked(why: str) -> int:
    """A blockable event initd could not put to its hooks: blocked (invariant 12)."""
    print(f"initd: blocked: {why}", file=sys.stderr)
    return 2
