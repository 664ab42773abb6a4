"""What the hook service counted (hooks run, how long, failed, timed out, their
decisions, events journaled and replayed), as it tells root over its channel (a
``metrics`` message, about once a second) and as root keeps it for ``/metrics``: one
shape, both ends (as state/ready.py).

The service runs as the agent, which may ptrace it and write to its channel (invariant
8): what it says here is the agent's word, and root takes it as data only. ``parse``
is total: every entry it cannot read as ours (a label past LABEL's pattern,
a count not a whole number in [0, MAX_COUNT], a list of the wrong length) is left out,
one by one, and past MAX_SERIES label sets the rest is; whatever the message, it returns
a Counts (empty at worst), never raises. So a forged summary can make the hook figures
wrong, never /metrics unreadable, larger than its bound, or root slower.

Each summary is the service's totals since it started. Root keeps them (``Tally``) so
that its counters never go backwards: per label set the largest it was told, and a
restart of the service adds what the last one counted to a base the next one's add to.
Root parses one every Tally.EVERY seconds at most: the one parse of a 64 KiB summary
costs milliseconds, and the channel lets the agent send 50 messages a second.
"""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

# a hook's duration, seconds (the upper bounds of the histogram's buckets; one more bucket
# counts what took longer than the last): from a quick guard to a slow build
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,31}")  # a format, event or decision name
MAX_SERIES = 32  # label sets kept per family: what is past it is left out (the largest
# summary, every label its longest, stays under the channel's line: channel.MAX_REQUEST)
MAX_COUNT = 2**53  # any count (a float's whole numbers), any sum of seconds
DECISION_NONE = "none"  # a hook that said neither block nor approve
NOTHING = object()  # no summary kept (a summary may be any JSON value, null too)

Key = tuple[str, str]
Histogram = tuple[tuple[int, ...], float]  # per-bucket counts (not cumulative), their sum


class Counts(NamedTuple):
    durations: dict[Key, Histogram]  # (format, event) -> the hooks' durations
    decisions: dict[Key, int]  # (format, decision) -> how many hooks said it
    failed: int = 0
    timed_out: int = 0
    journaled: int = 0  # events whose every step is in the journal
    replayed: int = 0  # events answered again from it

    def wire(self) -> dict[str, Any]:
        """As the service sends it (JSON: lists, not tuples as keys)."""
        return {"durations": [[*key, list(buckets), total] for key, (buckets, total)
                              in self.durations.items()],
                "decisions": [[*key, n] for key, n in self.decisions.items()],
                "failed": self.failed, "timedOut": self.timed_out,
                "journaled": self.journaled, "replayed": self.replayed}


def empty() -> Counts:
    return Counts({}, {})


def parse(raw: object) -> Counts:
    """What root takes of a summary the service sent: every entry read as ours, or left
    out (the module's docstring)."""
    if not isinstance(raw, dict):
        return empty()
    durations: dict[Key, Histogram] = {}
    for entry in _entries(raw.get("durations")):
        if len(entry) == 4 and (key := _key(entry[0], entry[1])) is not None:
            buckets, total = entry[2], _seconds(entry[3])
            if isinstance(buckets, list) and len(buckets) == len(BUCKETS) + 1 \
                    and total is not None and all(_count(n) is not None for n in buckets):
                durations[key] = (tuple(buckets), total)
    decisions: dict[Key, int] = {}
    for entry in _entries(raw.get("decisions")):
        if len(entry) == 3 and (key := _key(entry[0], entry[1])) is not None \
                and (n := _count(entry[2])) is not None:
            decisions[key] = n
    plain = [_count(raw.get(name)) or 0 for name in ("failed", "timedOut", "journaled",
                                                      "replayed")]
    return Counts(_bounded(durations), _bounded(decisions), *plain)


class Tally:
    """Root's totals of every start of the service: never backwards (the module's
    docstring). ``totals`` is made when a summary is taken, for a reader in another
    thread (replaced whole). A summary is parsed and taken at most once every EVERY
    seconds: one that comes sooner is kept, unread (the latest only, in place of the one
    kept before), and taken when its time comes (``due``, ``take``). The service sends
    one a second at most; a flood costs root no more than that."""

    EVERY = 0.5  # seconds

    def __init__(self) -> None:
        self._base = empty()  # what the services before this one counted
        self._latest = empty()  # the most this one has said, per label set
        self._taken = -math.inf
        self._kept: object = NOTHING  # a summary not taken yet
        self.totals = empty()

    def said(self, raw: object, now: float) -> None:
        """A summary as the service sent it (any JSON value): taken now, or when due."""
        self._kept = raw
        self.take(now)

    def due(self, now: float) -> float | None:
        """Seconds until the summary kept is to be taken (None: none is kept)."""
        return None if self._kept is NOTHING else max(0.0, self._taken + self.EVERY - now)

    def take(self, now: float, whenever: bool = False) -> None:
        if self._kept is NOTHING or (now - self._taken < self.EVERY and not whenever):
            return
        raw, self._kept, self._taken = self._kept, NOTHING, now
        self._latest = combined(self._latest, parse(raw), max)
        self.totals = combined(self._base, self._latest, _sum)

    def restarted(self, now: float) -> None:
        """The service started again: what the last one said is all it will."""
        self.take(now, whenever=True)
        self._base, self._latest = self.totals, empty()
        self._taken = -math.inf


def combined(a: Counts, b: Counts, how: Any) -> Counts:
    """``a`` and ``b`` label set by label set, each figure ``how(x, y)`` (max, or a sum
    capped at MAX_COUNT); at most MAX_SERIES label sets, ``a``'s first."""
    durations = dict(a.durations)
    for key, (buckets, total) in b.durations.items():
        mine = durations.get(key)
        durations[key] = (buckets, total) if mine is None else (
            tuple(how(x, y) for x, y in zip(mine[0], buckets, strict=True)),
            how(mine[1], total))
    decisions = dict(a.decisions)
    for key, n in b.decisions.items():
        decisions[key] = n if key not in decisions else how(decisions[key], n)
    return Counts(_bounded(durations), _bounded(decisions), *(
        how(x, y) for x, y in zip(a[2:], b[2:], strict=True)))


def _sum(x: Any, y: Any) -> Any:
    return min(x + y, MAX_COUNT)


def _bounded(series: dict[Key, Any]) -> dict[Key, Any]:
    return series if len(series) <= MAX_SERIES else dict(list(series.items())[:MAX_SERIES])


def _entries(raw: object) -> list[list[Any]]:
    """The lists among the first MAX_SERIES * 2 items of a list (else none)."""
    if not isinstance(raw, list):
        return []
    return [entry for entry in raw[:MAX_SERIES * 2] if isinstance(entry, list)]


def _key(first: object, second: object) -> Key | None:
    if isinstance(first, str) and isinstance(second, str) and LABEL.fullmatch(first) \
            and LABEL.fullmatch(second):
        return first, second
    return None


def _count(raw: object) -> int | None:
    if isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw <= MAX_COUNT:
        return raw
    return None


def _seconds(raw: object) -> float | None:
    if isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw) \
            and 0 <= raw <= MAX_COUNT:
        return float(raw)
    return None
