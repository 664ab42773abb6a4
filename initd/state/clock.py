"""Times as initd writes them: ``2026-11-25T03:08:36.513Z`` (UTC, milliseconds), in
status.json, session records, trust approvals and the supervisor's state alike."""

from __future__ import annotations

import time


def iso(when: float) -> str:
    """``when`` (seconds since the epoch) as ISO 8601, UTC, milliseconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when)) + f".{int(when % 1 * 1000):03d}Z"


def now_iso() -> str:
    return iso(time.time())
