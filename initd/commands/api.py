"""``initd status|health|ready``, ``initd turn``, ``initd emit EVENT``, ``initd hooks
output|rerun ID``: the control API from a shell. Each prints the JSON answer; a turn that
asks for a re-prompt exits 2 (like a blocking hook), an API error (or "not ready") exits 1
with its message."""

from __future__ import annotations

import json
import sys
import urllib.parse
from collections.abc import Sequence
from typing import Any

from initd.commands import client
from initd.commands.options import Parser
from initd.commands.probe import PROBE_TIMEOUT
from initd.errors import UsageError


def status(argv: Sequence[str]) -> int:
    p = Parser(prog="initd status", description="The hook service's status.json.")
    p.add_argument("--socket", metavar="PATH", help="(INITD_SOCKET)")
    args = p.parse_args(argv)
    return _show(*client.call("GET", "/v1/status", sock=args.socket))


def health(argv: Sequence[str]) -> int:
    """``initd health``: exit 0 while initd and its hook service answer (a liveness probe)."""
    p = Parser(prog="initd health", description="Liveness: initd's hook service answers; "
               "prints initd's, the agent's and the service's state.")
    p.add_argument("--socket", metavar="PATH", help="(INITD_SOCKET)")
    _timeout_option(p)
    args = p.parse_args(argv)
    return _show(*client.call("GET", "/v1/health", sock=args.socket, timeout=args.timeout))


def ready(argv: Sequence[str]) -> int:
    """``initd ready``: exit 0 once the agent is ready, 1 with the reason before (a
    readiness probe)."""
    p = Parser(prog="initd ready", description="Readiness: exit 0 once the agent is ready "
               "(--ready-port/--ready-url), else 1 with the reason.")
    p.add_argument("--socket", metavar="PATH", help="(INITD_SOCKET)")
    _timeout_option(p)
    args = p.parse_args(argv)
    code, answer = client.call("GET", "/v1/ready", sock=args.socket, timeout=args.timeout)
    return _show(code, answer)


def _timeout_option(p: Parser) -> None:
    from initd import settings

    def positive(text: str) -> float:
        seconds = settings.seconds(text)
        if not seconds > 0:
            raise ValueError("expected a number of seconds > 0")
        return seconds

    p.add_argument("--timeout", metavar="SECONDS", default=PROBE_TIMEOUT, type=positive,
                   help=f"give up after this long (default {PROBE_TIMEOUT:g}; keep it "
                        "under the probe's timeoutSeconds)")


def emit(argv: Sequence[str]) -> int:
    """``initd emit EVENT [--data JSON|-]``: fire a lifecycle event; print the outcome.
    Exit 0, 2 when it is blocked (the reason on stderr), 3 when a hook aborted it."""
    p = Parser(prog="initd emit", description="Fire a lifecycle event (pre_tool, "
               "after_turn, PreExecutionStart, on_iteration_complete, …) and print what its "
               "hooks decided. Exit 2 when blocked, 3 when aborted.")
    p.add_argument("event")
    p.add_argument("--data", metavar="JSON", default="{}",
                   help="the event's payload as a JSON object, or - to read it from stdin")
    p.add_argument("--socket", metavar="PATH", help="(INITD_SOCKET)")
    args = p.parse_args(argv)
    text = sys.stdin.read() if args.data == "-" else args.data
    try:
        payload = json.loads(text or "{}")
    except ValueError as err:
        raise UsageError(f"--data: not valid JSON: {err}") from None
    if not isinstance(payload, dict):
        raise UsageError("--data: expected a JSON object")
    code, answer = client.call("POST", f"/v1/events/{urllib.parse.quote(args.event, safe='')}",
                               payload, sock=args.socket)
    result = _show(code, answer)
    if result != 0:
        return result
    if answer.get("blocked"):
        print(f"initd: blocked: {answer.get('reason')}", file=sys.stderr)
        return 2
    return 3 if answer.get("aborted") else 0


def turn(argv: Sequence[str]) -> int:
    p = Parser(prog="initd turn", description="A turn has completed: evaluate the file "
               "hooks. Exit 2 when the agent should be re-prompted (the message is printed).")
    p.add_argument("--trigger", choices=("user", "hook"), default="user")
    p.add_argument("--socket", metavar="PATH", help="(INITD_SOCKET)")
    args = p.parse_args(argv)
    code, answer = client.call("POST", "/v1/turn", {"trigger": args.trigger},
                               sock=args.socket)
    result = _show(code, answer)
    return 2 if result == 0 and answer.get("action") == "reprompt" else result


def hook(verb: str, argv: Sequence[str]) -> int:
    p = Parser(prog=f"initd hooks {verb}")
    p.add_argument("id")
    p.add_argument("--socket", metavar="PATH", help="(INITD_SOCKET)")
    args = p.parse_args(argv)
    if verb == "output":
        code, answer = client.call("GET", f"/v1/hooks/{args.id}/output", sock=args.socket)
        if code == 200:
            sys.stdout.write(answer["output"])
            return 0
        return _show(code, answer)
    return _show(*client.call("POST", f"/v1/hooks/{args.id}/rerun", sock=args.socket))


def _show(code: int, answer: Any) -> int:
    if code != 200:
        print(client.reason(answer), file=sys.stderr)
        return 1
    print(json.dumps(answer, indent=2))
    return 0
