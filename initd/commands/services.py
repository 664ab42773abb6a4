"""``initd services``: the image's services (initd.yaml's ``services:``) as a table, or
``--json``; ``initd services start|stop|restart NAME`` asks for one. Both go through the
control socket (GET /v1/services, POST /v1/services/NAME/VERB): the hook service passes
a request on to initd's supervisor, which does it only for a service that runs as the
agent's own user (any other: 403, one line, exit 1). Every field shown comes from the
agent's side of the socket, so each is one line of printable text here."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from initd.commands import client
from initd.commands.options import Parser, socket_option, table
from initd.errors import one_line

VERBS = ("start", "stop", "restart")
COLUMNS = ("NAME", "STATE", "PID", "UPTIME", "RESTARTS", "LAST-EXIT", "READY-BY")


def main(argv: Sequence[str]) -> int:
    p = Parser(prog="initd services", description="The image's services: their state, or "
               "start, stop or restart one (only one that runs as the agent's user).")
    socket_option(p)
    p.add_argument("--json", action="store_true", help="the answer as JSON")
    p.add_argument("verb", nargs="?", choices=VERBS, help="what to do with NAME")
    p.add_argument("name", nargs="?", help="the service")
    args = p.parse_args(argv)
    if args.verb is not None:
        if args.name is None:
            p.error(f"{args.verb}: which service? (initd services {args.verb} NAME)")
        code, answer = client.call("POST", f"/v1/services/{args.name}/{args.verb}",
                                   sock=args.socket)
        if code != 200 or args.json:
            return client.show(code, answer)
        print(f"{one_line(str(args.name))}: {one_line(str(answer.get('result')))}")
        return 0
    code, answer = client.call("GET", "/v1/services", sock=args.socket)
    if code != 200 or args.json:
        return client.show(code, answer)
    services = answer.get("services") if isinstance(answer, dict) else None
    if not isinstance(services, dict) or not services:
        print("no services (initd.yaml declares none)")
        return 0
    table([COLUMNS, *(row(str(name), shown) for name, shown in services.items()
                      if isinstance(shown, dict))])
    return 0


def row(name: str, shown: dict[str, Any]) -> list[str]:
    def text(value: object) -> str:
        return "-" if value is None else one_line(str(value))[:60]

    return [text(name), text(shown.get("state")), text(shown.get("pid")),
            uptime(shown.get("startedAt")) if shown.get("pid") else "-",
            text(shown.get("restarts")), text(shown.get("lastExitCode")),
            text(shown.get("readyBy"))]


def uptime(started: object) -> str:
    """How long since ``started`` (an ISO time), as 1h02m, 3m05s or 7s."""
    from datetime import datetime

    try:
        since = datetime.fromisoformat(str(started)).timestamp()
    except ValueError:
        return "-"
    seconds = max(0, int(time.time() - since))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s" \
        if rest >= 60 else f"{rest}s"
