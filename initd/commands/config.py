"""``initd config set-auto-commit|set-auto-push true|false``: the built-in git hooks in the
workspace's ``.autoagent/config.json`` (AutoAgent's convenience commands)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from initd.commands.options import Parser, workspace_option
from initd.config import settings
from initd.errors import InitdError


def config(argv: Sequence[str]) -> int:
    from initd.config.problems import LoadError
    from initd.events.dialects import autoagent

    p = Parser(prog="initd config", description="AutoAgent's convenience commands: the "
               "built-in git hooks in .autoagent/config.json.")
    p.add_argument("setting", choices=("set-auto-commit", "set-auto-push"))
    p.add_argument("value", choices=("true", "false"))
    workspace_option(p)
    args = p.parse_args(argv)
    workspace = settings.load(args, os.environ).workspace
    kind = "git-commit" if args.setting == "set-auto-commit" else "git-push"
    try:
        print(autoagent.set_auto(workspace, kind, args.value == "true"))
    except (LoadError, OSError) as err:
        raise InitdError(str(err)) from None
    return 0
