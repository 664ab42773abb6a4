"""``initd service``: the hook service process (the supervisor runs it; people can too).

Serves the control API until SIGTERM/SIGINT. Under initd it inherits the listening
socket (``--listen-fd``) and its private channel to the supervisor (``--channel-fd``);
run by hand, it binds ``--socket`` itself and stands alone.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from initd.commands.options import Parser, socket_option, workspace_option
from initd.config import log, settings, values
from initd.http import server as httpd
from initd.http.spool import Spool
from initd.process import users
from initd.service.app import EVENT_BODY, make_app
from initd.service.core import HookService

if TYPE_CHECKING:
    from initd.state.snapshot import Snapshot


def parser() -> Parser:
    p = Parser(prog="initd service", description="Serve the control API on a Unix socket.")
    socket_option(p, f"(INITD_SOCKET; {settings.SOCKET_HELP})")
    workspace_option(p)
    p.add_argument("--hooks-dir", metavar="DIR", help="(INITD_HOOKS_DIR)")
    p.add_argument("--session-id", metavar="ID", help="(INITD_SESSION_ID, SESSION_ID)")
    p.add_argument("--user", metavar="NAME", help="the agent user: its group may connect")
    p.add_argument("--max-reprompts", metavar="N", type=values.count,
                   help="hook-triggered re-prompts per user message (INITD_MAX_REPROMPTS; "
                        "default 3)")
    p.add_argument("--config", metavar="PATH", help="config file (INITD_CONFIG)")
    p.add_argument("-v", "--verbose", action="count")
    # given by initd's supervisor, not by people
    p.add_argument("--listen-fd", type=int, help=argparse.SUPPRESS)
    p.add_argument("--channel-fd", type=int, help=argparse.SUPPRESS)
    p.add_argument("--guards-fd", type=int, help=argparse.SUPPRESS)  # state/snapshot.py
    p.add_argument("--agent-command", type=json.loads, help=argparse.SUPPRESS)
    return p


def guards(fd: int | None, logger: log.Logger) -> Snapshot | None:
    """The session's guard snapshot root sealed in memory file ``fd`` (None: run by hand,
    the service takes its own as it starts)."""
    if fd is None:
        return None
    from initd.state import snapshot

    taken = snapshot.load(fd)
    os.close(fd)
    if taken.failed is not None:
        logger.error("the session's guards are not known: every blockable event is blocked",
                     reason=taken.failed)
    return taken


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    config = settings.load(args, os.environ)
    log.configure(config.verbose, config.log_format)
    logger = log.get(logger="service")
    from initd.hooks import context, recovery

    agent = users.agent(config.user)
    if args.listen_fd is not None:
        sock = socket.socket(fileno=args.listen_fd)  # bound by the supervisor, for good
    else:
        sock = httpd.listen(config.socket, agent.gid if agent is not None else None)
        if agent is not None and os.geteuid() == 0 and agent.uid != 0:
            # Run by hand as root for an agent: the service is the agent's, as under
            # initd (it writes the agent's files with the agent's rights, invariant 8).
            users.become(agent)
    link = None
    if args.channel_fd is not None:
        from initd.process.channel import Channel
        from initd.service.link import SupervisorLink

        link = SupervisorLink(Channel.from_fd(args.channel_fd), logger)
    # Hooks a dead runner left "running" (a crash of an earlier service, say) are
    # recovered; under initd the supervisor has usually done it already.
    ctx = context.make(config, agent, logger, recover=recovery.runner_gone)
    if ctx.state_problem is not None:  # under initd, its supervisor said it at boot
        (logger.debug if link is not None else logger.warning)(ctx.state_problem)
    if link is not None and ctx.trust is not None and os.geteuid() != 0:
        ctx = ctx._replace(trust=ctx.trust.asking(link.trust_verdict))  # root's 0600 store
    service = HookService(ctx, config.hooks_dir, config.max_reprompts, link,
                          command=args.agent_command, guards=guards(args.guards_fd, logger))
    server = httpd.UnixWSGIServer(sock, make_app(service), max_body=EVENT_BODY,
                                  spool=Spool(ctx.state.child(ctx.session_id, "spool")))

    stop_on_signals(service, server)
    logger.info("control API listening", socket=config.socket)
    if link is not None:
        link.ready()
    print(f"ready (socket: {config.socket})", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        service.close()
        if args.listen_fd is None:  # ours to remove; an inherited one is the supervisor's
            server.server_close()
            try:
                os.unlink(config.socket)
            except OSError:
                pass  # gone already, or in root's directory and we are the agent now
    return 0


def stop_on_signals(service: HookService, server: httpd.UnixWSGIServer) -> None:
    """TERM or INT: cancel what runs, then end the server (from a thread: shutdown waits
    for the loop this thread runs). Once: a second signal runs the handler again inside
    the first, where cancel() may hold a lock of this thread's."""
    stopping: list[int] = []

    def stop(signum: int, frame: object) -> None:
        if stopping:
            return
        stopping.append(signum)
        service.cancel()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
