"""The main command, ``initd [OPTIONS] -- CMD``, in the supervisor process PID 1 forked:
parse the command line, then boot (initd/supervisor/boot.py).

The common command lines, ``initd [--user NAME] [--] CMD [ARGS...]`` (tini's, and the
README's ENTRYPOINT), are read by hand: argparse and the options' module are a large part
of such a boot's CPU (bench/README.md, row 31), and such a line leaves every other option
unset.
``tests/commands/test_supervise.py`` holds it to what the parser makes of the same line.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

# every option's dest, as the parser has them (options.parser: its defaults are all None)
OPTIONS = ("workspace", "user", "grace", "stop_signal", "remap_exit", "restart",
           "max_restarts", "restart_window", "env_file", "config", "ready_port", "ready_url",
           "health_port", "session_id", "hooks_dir", "secret", "state_dir", "socket",
           "service", "max_reprompts", "trust", "trust_file", "precommit", "devcontainer",
           "verbose", "log_format")


def main(argv: list[str]) -> int:
    from initd.supervisor import boot

    return boot.boot(plain(argv) or parsed(argv))


def plain(argv: list[str]) -> Any:
    """``[--user NAME] [--] CMD [ARGS...]`` (the README's ENTRYPOINT, and tini's line),
    read by hand: every other option unset, as the parser would leave it; None for any
    other command line (another option, --help, no command), which the parser reads."""
    user = None
    if argv[:1] == ["--user"] and len(argv) > 1 and not argv[1].startswith("-"):
        user, argv = argv[1], argv[2:]
    elif argv[:1] and argv[0].startswith("--user="):
        user, argv = argv[0].removeprefix("--user="), argv[1:]
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command or (argv[:1] != ["--"] and command[0].startswith("-")):
        return None
    return SimpleNamespace(**{**dict.fromkeys(OPTIONS), "user": user}, command=list(command))


def parsed(argv: list[str]) -> Any:
    from initd.commands import options

    return options.parse(argv)
