"""A token bucket: at most ``burst`` at once, then ``rate`` a second. What bounds each op
the agent can send root over the hook service's channel (supervisor/serviceops.py): the
messages root reads there, and the pre-commit chain's rewrites."""

from __future__ import annotations

import time


class Bucket:
    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate  # tokens a second
        self.burst = burst  # tokens at most (and at first)
        self._tokens = float(burst)
        self._at = time.monotonic()

    def _fill(self) -> None:
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now

    def ready(self, tokens: int = 1) -> bool:
        """Are there ``tokens`` now? (None is taken.)"""
        self._fill()
        return self._tokens >= tokens

    def take(self) -> bool:
        """A token, if there is one now."""
        self._fill()
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True

    def wait(self, tokens: int = 1) -> float:
        """Seconds until there are ``tokens`` (0: now)."""
        self._fill()
        return max(0.0, (tokens - self._tokens) / self.rate)
