"""``initd svlog --name NAME [--dir DIR] --max-bytes B --backups K [--json]``: a
service's logger (process/svlog.py), started by root's supervisor as the service's user
(supervisor/servicelog.py) with the service's pipe on stdin. A hidden verb: its command
line is root's, never a person's, so it is read by hand (no argparse: the process lives
as long as initd, and what it imports it keeps)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from initd.errors import InitdError

if TYPE_CHECKING:
    from collections.abc import Sequence

VALUED = ("--name", "--dir", "--max-bytes", "--backups")
USAGE = "usage: initd svlog --name NAME [--dir DIR] --max-bytes B --backups K [--json]"


def main(argv: Sequence[str]) -> int:
    options, json_lines = parse(argv)
    from initd.process import svlog

    return svlog.run(options["--name"], options.get("--dir"),
                     _count(options, "--max-bytes", 1), _count(options, "--backups", 0),
                     json_lines)


def parse(argv: Sequence[str]) -> tuple[dict[str, str], bool]:
    """The options as given (each at most once), and --json; InitdError otherwise."""
    options: dict[str, str] = {}
    json_lines = False
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--json":
            json_lines = True
        elif arg in VALUED and args and arg not in options:
            options[arg] = args.pop(0)
        else:
            raise InitdError(f"svlog: unexpected {arg!r} ({USAGE})")
    missing = [name for name in ("--name", "--max-bytes", "--backups") if name not in options]
    if missing:
        raise InitdError(f"svlog: {', '.join(missing)} missing ({USAGE})")
    return options, json_lines


def _count(options: dict[str, str], name: str, least: int) -> int:
    value = options[name]
    if not value.isdigit() or int(value) < least:
        raise InitdError(f"svlog: {name}: expected a whole number, at least {least} "
                         f"(got {value!r})")
    return int(value)
