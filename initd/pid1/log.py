"""PID 1's own few log lines, and the one-write line that its children's output cannot split.

A module of its own so that the CLI's error boundary and the supervisor can write their
one line with ``write_line`` without importing PID 1's loop and its signal tables.
PID-1 tier: ``sys`` and ``time``, ``json`` on demand. PID 1 cannot import structlog (not
the standard library, and its import is more than PID 1's whole start), so its lines
are written here in the shape initd's structlog log gives every other process's
(config/log.py): the same keys, ``timestamp`` in the same form, ``logger`` ``pid1``;
tests/pid1/test_log.py holds the two to one shape.
"""

from __future__ import annotations

import sys
import time


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

            line = json.dumps({"event": event, "level": name, "logger": "pid1",
                               "timestamp": timestamp(), **fields})
        else:
            line = "initd: " + " ".join([event, *(f"{k}={v}" for k, v in fields.items())])
        write_line(line)


def timestamp(now: float | None = None) -> str:
    """ISO 8601 in UTC to the microsecond, as structlog's ``TimeStamper(fmt="iso",
    utc=True)`` writes it: ``2026-11-28T07:46:16.123456Z``."""
    seconds, micro = divmod(round((time.time() if now is None else now) * 1e6), 1_000_000)
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(seconds))}.{micro:06d}Z"


def write_line(line: str) -> None:
    """One write per line: CMD shares our stderr, and print() writes the newline
    separately when PYTHONUNBUFFERED=1, which lets CMD's output land inside our line."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # stderr is a closed pipe (a log collector gone): the line, not initd, is lost


WARN, INFO, DEBUG = 0, 1, 2
