"""The main command, ``initd [OPTIONS] -- CMD``, in the supervisor process PID 1 forked:
parse the command line, then boot (initd/supervisor/boot.py)."""

from __future__ import annotations

from initd.commands import options
from initd.supervisor import boot


def main(argv: list[str]) -> int:
    return boot.boot(options.parse(argv))
