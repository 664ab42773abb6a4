"""When to restart a crashed child: capped exponential backoff and a crash-loop limit.

Pure, so it is tested by tables. Defaults follow the most requested supervisor fixes
(supervisor#323 exponential, #1528 a cap): 1 s doubling to 30 s, back to 1 s after a run
of 10 s, and at most ``max_restarts`` restarts inside ``window`` seconds (s6-permafailon).
"""

from __future__ import annotations

from collections import deque


class Backoff:
    def __init__(self, max_restarts: int, window: float, base: float = 1.0, cap: float = 30.0,
                 healthy_after: float = 10.0) -> None:
        self.max_restarts = max_restarts
        self.window = window
        self.base = base
        self.cap = cap
        self.healthy_after = healthy_after
        self.failures = 0  # consecutive short runs
        self.restarts: deque[float] = deque()  # times of recent restarts

    def next_delay(self, now: float, ran_for: float) -> float | None:
        """Delay before the next start, or None to give up (crash loop)."""
        if ran_for >= self.healthy_after:
            self.failures = 0
        while self.restarts and now - self.restarts[0] > self.window:
            self.restarts.popleft()
        if len(self.restarts) >= self.max_restarts:
            return None
        delay = min(self.base * 2.0**self.failures, self.cap)
        self.failures += 1
        self.restarts.append(now + delay)
        return delay
