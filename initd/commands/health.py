"""``initd health`` and ``initd ready`` for people (a terminal, ``--help``, a value the
exec probes' plain form cannot read: commands/probe.py): the answer, indented. Exit 0
while initd's hook service answers (health) or once the agent is ready (ready); 1 with
the reason; 125 when there is no answer."""

from __future__ import annotations

from collections.abc import Sequence

from initd.commands import client
from initd.commands.options import Parser, socket_option, timeout_option
from initd.commands.probe import PROBE_TIMEOUT


def health(argv: Sequence[str]) -> int:
    """``initd health``: exit 0 while initd and its hook service answer (a liveness probe)."""
    p = Parser(prog="initd health", description="Liveness: initd's hook service answers; "
               "prints initd's, the agent's and the service's state.")
    socket_option(p)
    timeout_option(p, PROBE_TIMEOUT)
    args = p.parse_args(argv)
    return client.show(*client.call("GET", "/v1/health", sock=args.socket, timeout=args.timeout))


def ready(argv: Sequence[str]) -> int:
    """``initd ready``: exit 0 once the agent is ready, 1 with the reason before (a
    readiness probe)."""
    p = Parser(prog="initd ready", description="Readiness: exit 0 once the agent is ready "
               "(--ready-port/--ready-url), else 1 with the reason.")
    socket_option(p)
    timeout_option(p, PROBE_TIMEOUT)
    args = p.parse_args(argv)
    code, answer = client.call("GET", "/v1/ready", sock=args.socket, timeout=args.timeout)
    return client.show(code, answer)
