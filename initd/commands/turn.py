"""``initd turn``: a turn has completed; evaluate the file hooks. Exit 2 when the agent
should be re-prompted (the message is in the JSON printed); 125, with one line, for an
``--id`` that is no key, or one the service refuses (422: the key of another turn; 409:
a turn still running, this one or another)."""

from __future__ import annotations

from collections.abc import Sequence

from initd.commands import client
from initd.commands.options import Parser, socket_option


def turn(argv: Sequence[str]) -> int:
    p = Parser(prog="initd turn", description="A turn has completed: evaluate the file "
               "hooks. Exit 2 when the agent should be re-prompted (the message is printed).")
    p.add_argument("--trigger", choices=("user", "hook"), default="user")
    p.add_argument("--id", metavar="KEY", help="the turn's Idempotency-Key: sent again with "
                   "the same key, its hooks do not run again (default: a new one, and the "
                   "turn is sent again if the service dies while it runs)")
    socket_option(p)
    args = p.parse_args(argv)
    key = client.new_key() if args.id is None else client.checked_key(args.id, "--id")
    code, answer = client.call("POST", "/v1/turn", {"trigger": args.trigger},
                               sock=args.socket, key=key)
    client.refused_key(code, answer)
    result = client.show(code, answer)
    return 2 if result == 0 and answer.get("action") == "reprompt" else result
