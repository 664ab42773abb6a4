"""What this hook service counts for root's ``/metrics``: each hook an event or a turn
ran (its format, its event, how long it took, whether it failed or timed out, what it
decided) and each event journaled or replayed; sent to root over the channel
(a ``metrics`` message, state/hookcounts.py's shape) at most once every EVERY seconds,
and only when it changed. Root takes it as the agent's word (it is: this process is the
agent's), bounded and checked, never trusted."""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable
from typing import Any

from initd.state.hookcounts import BUCKETS, DECISION_NONE, LABEL, MAX_SERIES, Counts, Key

EVERY = 1.0  # seconds between two summaries at most (one message: the channel's rate is 50/s)
FILE_HOOKS = ("discobot", "file")  # a turn's file hooks: their format and "event"


class Counter:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # requests are answered in threads of their own
        self._durations: dict[Key, tuple[list[int], float]] = {}
        self._decisions: dict[Key, int] = {}
        self._plain = {"failed": 0, "timed_out": 0, "journaled": 0, "replayed": 0}
        self.changed = threading.Event()

    def event(self, outcome: dict[str, Any], journaled: bool) -> None:
        """An event fired (its outcome's JSON): each hook's result, and the journal's."""
        with self._lock:
            for result in outcome.get("results") or ():
                if result.get("status") == "untrusted":
                    continue  # refused: it did not run
                key = (str(result.get("dialect")), str(outcome.get("event")))
                self._ran(key, result.get("durationMs"), result.get("status") in (
                    "failed", "error"), bool(result.get("timedOut")))
                said = "block" if result.get("status") == "blocked" else \
                    str(result.get("decision") or DECISION_NONE)
                self._count(self._decisions, (key[0], said))
            self._plain["journaled"] += journaled
        self.changed.set()

    def turn(self, answer: dict[str, Any]) -> None:
        """A turn's evaluation: each file hook it ran."""
        with self._lock:
            for result in answer.get("results") or ():
                if not result.get("refused") and not result.get("cancelled"):
                    self._ran(FILE_HOOKS, result.get("durationMs"),
                              not result.get("success"), bool(result.get("timedOut")))
        self.changed.set()

    def replayed(self) -> None:
        """An event answered again from its journal: no hook ran."""
        with self._lock:
            self._plain["replayed"] += 1
        self.changed.set()

    def _ran(self, key: Key, duration_ms: object, failed: bool, timed_out: bool) -> None:
        self._plain["failed"] += failed
        self._plain["timed_out"] += timed_out
        if not all(map(LABEL.fullmatch, key)) or (
                key not in self._durations and len(self._durations) >= MAX_SERIES):
            return  # (root would leave it out)
        buckets, total = self._durations.get(key) or ([0] * (len(BUCKETS) + 1), 0.0)
        seconds = duration_ms / 1000 if isinstance(duration_ms, int | float) else 0.0
        buckets[bisect.bisect_left(BUCKETS, seconds)] += 1  # (le: a bound is its bucket's)
        self._durations[key] = (buckets, total + seconds)

    @staticmethod
    def _count(series: dict[Key, int], key: Key) -> None:
        if key in series or (len(series) < MAX_SERIES and all(map(LABEL.fullmatch, key))):
            series[key] = series.get(key, 0) + 1

    def summary(self) -> Counts:
        with self._lock:
            self.changed.clear()
            return Counts({key: (tuple(b), total) for key, (b, total) in
                           self._durations.items()}, dict(self._decisions), **self._plain)


def report(send: Callable[[dict[str, Any]], bool], counter: Counter,
           every: float = EVERY) -> threading.Thread:
    """A thread that sends ``counter``'s summary when it changed, at most once every
    ``every`` seconds, until a send fails (the supervisor is gone)."""
    def loop() -> None:
        while True:
            counter.changed.wait()
            if not send({"op": "metrics", "counts": counter.summary().wire()}):
                return
            time.sleep(every)  # (the pace)

    thread = threading.Thread(target=loop, name="metrics", daemon=True)
    thread.start()
    return thread
