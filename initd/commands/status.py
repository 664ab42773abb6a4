"""``initd status``: the hook service's status.json, as JSON."""

from __future__ import annotations

from collections.abc import Sequence

from initd.commands import client
from initd.commands.options import Parser, socket_option


def status(argv: Sequence[str]) -> int:
    p = Parser(prog="initd status", description="The hook service's status.json.")
    socket_option(p)
    args = p.parse_args(argv)
    return client.show(*client.call("GET", "/v1/status", sock=args.socket))
