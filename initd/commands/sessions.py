"""``initd sessions``: the session records (AutoAgent's design), newest first, read from
the agent user's ``~/.discobot/sessions`` without a running initd.
``initd config set-auto-commit|set-auto-push true|false``: the built-in git hooks in the
workspace's ``.autoagent/config.json`` (AutoAgent's convenience commands)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from initd import settings, statefile, users
from initd.commands.options import Parser
from initd.errors import InitdError


def sessions(argv: Sequence[str]) -> int:
    from initd.events import sessions as records

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
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
              .rstrip())
    return 0


def config(argv: Sequence[str]) -> int:
    from initd.events.dialects import autoagent
    from initd.events.dialects.common import LoadError

    p = Parser(prog="initd config", description="AutoAgent's convenience commands: the "
               "built-in git hooks in .autoagent/config.json.")
    p.add_argument("setting", choices=("set-auto-commit", "set-auto-push"))
    p.add_argument("value", choices=("true", "false"))
    p.add_argument("--workspace", metavar="DIR", help="(INITD_WORKSPACE; default: cwd)")
    args = p.parse_args(argv)
    args.command = ["config"]
    workspace = settings.load(args, os.environ).workspace
    kind = "git-commit" if args.setting == "set-auto-commit" else "git-push"
    try:
        print(autoagent.set_auto(workspace, kind, args.value == "true"))
    except (LoadError, OSError) as err:
        raise InitdError(str(err)) from None
    return 0
