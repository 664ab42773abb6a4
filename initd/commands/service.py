"""``initd service``: the hook service process (the supervisor will run it; people can too).

Serves the control API on the socket until SIGTERM/SIGINT.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Sequence

from initd import log, settings, users
from initd.options import Parser
from initd.service.app import make_app
from initd.service.core import HookService
from initd.service.server import DEFAULT_SOCKET, UnixWSGIServer


def parser() -> Parser:
    p = Parser(prog="initd service", description="Serve the control API on a Unix socket.")
    p.add_argument("--socket", metavar="PATH", default=None,
                   help=f"(INITD_SOCKET; default {DEFAULT_SOCKET})")
    p.add_argument("--workspace", metavar="DIR", help="(INITD_WORKSPACE; default: cwd)")
    p.add_argument("--hooks-dir", metavar="DIR", help="(INITD_HOOKS_DIR)")
    p.add_argument("--session-id", metavar="ID", help="(INITD_SESSION_ID, SESSION_ID)")
    p.add_argument("--user", metavar="NAME", help="the agent user: its group may connect")
    p.add_argument("--max-reprompts", metavar="N", type=int, default=3,
                   help="hook-triggered re-prompts per user message (default 3)")
    p.add_argument("--config", metavar="PATH", help="config file (INITD_CONFIG)")
    p.add_argument("-v", "--verbose", action="count")
    return p


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    args.command = ["service"]
    config = settings.load(args, os.environ)
    log.configure(config.verbose, config.log_format)
    logger = log.get(logger="service")
    from initd.hooks import session

    agent = users.lookup(config.user) if config.user else None
    # A (re)started service recovers its own file hooks a crash left running (and
    # queues them again); a session hook may still really run in the supervisor.
    ctx = session.context(config, agent, logger, recover=("file",))
    service = HookService(ctx, config.hooks_dir, args.max_reprompts)
    path = args.socket or os.environ.get("INITD_SOCKET") or DEFAULT_SOCKET
    server = UnixWSGIServer(path, make_app(service),
                            group=agent.gid if agent is not None else None)

    def stop(signum: int, frame: object) -> None:
        service.cancel()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    logger.info("control API listening", socket=path)
    print(f"ready (socket: {path})", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    return 0
