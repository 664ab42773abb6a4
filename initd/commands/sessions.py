"""``initd sessions``: the session records (AutoAgent's design), newest first, read from
the agent user's ``~/.discobot/sessions`` without a running initd."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from initd.commands.options import Parser, table
from initd.process import users
from initd.state import statefile


def sessions(argv: Sequence[str]) -> int:
    from initd.events import records

    p = Parser(prog="initd sessions", description="Session records, newest first.")
    p.add_argument("--user", metavar="NAME", help="whose records (INITD_USER, AGENT_USER; "
                   "default: yours)")
    p.add_argument("--state-dir", metavar="DIR", help="where initd keeps its state "
                   "(INITD_STATE_DIR; default: the user's ~/.discobot)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    args = p.parse_args(argv)
    name = args.user or os.environ.get("INITD_USER") or os.environ.get("AGENT_USER")
    home = (users.agent(name) or users.current()).home
    state_dir = args.state_dir or os.environ.get("INITD_STATE_DIR") or None
    found = records.listing(statefile.root(home, state_dir and os.path.abspath(state_dir)))
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    rows = [("ID", "STATUS", "STARTED", "ENDED", "EVENTS", "BLOCKED", "WORKSPACE")]
    rows += [(str(r.get("id")), str(r.get("status")), str(r.get("startTime")),
              str(r.get("endTime") or "-"), str(r.get("events", 0)),
              str(r.get("blocked", 0)), str(r.get("workspace"))) for r in found]
    table(rows)
    return 0
