"""A token bucket: at most ``burst`` at once, then ``rate`` a second. What bounds each op
the agent can send root over the hook service's channel (supervisor/serviceops.py): the
messages root reads there, and the pre-commit chain's rewrites."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


class Bucket:
    def __init__(self, rate: float, burst: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate  # tokens a second
        self.burst = burst  # tokens at most (and at first)
        self.clock = clock  # seconds, never going back (a test passes its own)
        self._tokens = float(burst)
        self._at = clock()

    def _fill(self) -> None:
        now = self.clock()
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
