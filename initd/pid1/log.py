"""PID 1's own few log lines, and the one-write line that its children's output cannot split.

A module of its own so that the CLI's error boundary and the supervisor can write their
one line with ``write_line`` without importing PID 1's loop and its signal tables.
PID-1 tier: ``sys`` only, ``json`` on demand, no structlog here.
"""

from __future__ import annotations

import sys


class Log:
    """PID 1's few log lines: JSON for machines, ``initd: …`` for people. No structlog here."""

    def __init__(self, verbose: int = 0, json_lines: bool | None = None) -> None:
        self.verbose = verbose
        self.json_lines = (not sys.stderr.isatty()) if json_lines is None else json_lines

    def __call__(self, level: int, event: str, **fields: object) -> None:
        if level > self.verbose:
            return
        name = ("warning", "info", "debug")[min(level, 2)]
        if self.json_lines:
            import json  # imported on demand: PID 1's resident size is a budget

            line = json.dumps({"event": event, "level": name, "logger": "pid1", **fields})
        else:
            line = "initd: " + " ".join([event, *(f"{k}={v}" for k, v in fields.items())])
        write_line(line)


def write_line(line: str) -> None:
    """One write per line: CMD shares our stderr, and print() writes the newline
    separately when PYTHONUNBUFFERED=1, which lets CMD's output land inside our line."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # stderr is a closed pipe (a log collector gone): the line, not initd, is lost


WARN, INFO, DEBUG = 0, 1, 2
