"""``initd shim AGENT [--write] [--user NAME]``: the agent's own hook config that sends
each of its events to initd (``initd emit --from AGENT``, commands/emitfrom.py), printed
as the agent's file holds it; ``--write`` merges it into the user's own file (below
$HOME: Claude Code's ``~/.claude/settings.json``…), keeping every key and hook already
there, and adding no line twice. Run as root with ``--user``, the file is written by
that user (never root's file in the user's home)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from initd.commands.options import Parser
from initd.errors import InitdError, UsageError

COMMAND = "initd emit --from {agent}"
LIMIT = 4 << 20  # an agent's config file initd merges into: more is no config


def shim(argv: Sequence[str]) -> int:
    from initd.events import wires
    from initd.events.sources import AGENTS

    p = Parser(prog="initd shim", description="Print (or --write) the hook config that "
               "sends every event of AGENT to initd's hooks, of every format.")
    p.add_argument("agent", choices=AGENTS)
    p.add_argument("--write", action="store_true",
                   help="merge it into the user's own file (below $HOME)")
    p.add_argument("--user", metavar="NAME", help="as root: write as this user, in its home")
    p.add_argument("--command", metavar="CMD", help="the command each event runs (default: "
                   f"{COMMAND.format(agent='AGENT')})")
    args = p.parse_args(argv)
    wire = wires.wire(args.agent)
    assert wire is not None  # (one of AGENTS, its choices)
    made = wire.shim(args.command or COMMAND.format(agent=args.agent))
    if not args.write:
        print(json.dumps(made.config, indent=2))
        return 0
    if args.user is not None:
        return _as_user(args.user, made.path, made.config)
    try:
        path = write(os.path.expanduser("~"), made.path, made.config)
    except OSError as err:
        raise InitdError(f"shim: {err}") from None
    print(f"initd: {path}: every {args.agent} hook event sends to initd", file=sys.stderr)
    return 0


def _as_user(name: str, relative: str, config: dict[str, Any]) -> int:
    from initd.process import users

    if os.geteuid() != 0:
        raise UsageError("--user: only root can write as another user")
    account = users.lookup(name)
    pid = os.fork()
    if pid == 0:  # the user's own process: its file, by its rights
        code = 1
        try:
            users.become(account)
            write(account.home, relative, config)
            code = 0
        except (OSError, InitdError) as err:
            print(f"initd: shim: {err}", file=sys.stderr)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def write(home: str, relative: str, config: dict[str, Any]) -> str:
    """``config`` merged into the JSON object at ``home/relative`` (made when missing),
    through the one door (state/agentfs: no link followed below the home, the file
    replaced atomically); its path."""
    from initd.state.agentfs import Place

    *dirs, name = relative.split("/")
    with Place(home, tuple(dirs)).open(create=True) as where:
        path = where.where(name)
        have_bytes = where.read(name, LIMIT)
        try:
            have = {} if have_bytes is None else json.loads(have_bytes)
        except ValueError as err:
            raise InitdError(f"{path}: not JSON initd can merge into ({err}): left as it "
                             "is") from None
        if not isinstance(have, dict):
            raise InitdError(f"{path}: not a JSON object: left as it is")
        where.write(name, (json.dumps(merge(have, config), indent=2) + "\n").encode())
    return path


def merge(have: Any, add: Any) -> Any:
    """Mappings merged key by key; a list gains each item it does not hold yet."""
    if isinstance(have, dict) and isinstance(add, dict):
        return {**have, **{k: merge(have[k], v) if k in have else v for k, v in add.items()}}
    if isinstance(have, list) and isinstance(add, list):
        return have + [item for item in add if item not in have]
    return add
