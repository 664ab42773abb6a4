"""The backoff schedule, by table (pure)."""

from __future__ import annotations

import pytest

from initd.supervisor.backoff import Backoff


def schedule(runs: list[tuple[float, float]], **kw: float) -> list[float | None]:
    """(time of exit, how long it ran) -> the delays chosen."""
    backoff = Backoff(max_restarts=int(kw.pop("max_restarts", 100)), window=kw.pop("window", 1e9),
                      **kw)
    return [backoff.next_delay(now, ran) for now, ran in runs]


def test_doubles_from_1s_and_caps_at_30s() -> None:
    runs, now = [], 0.0
    for _ in range(8):
        runs.append((now, 0.1))
        now += 100
    assert schedule(runs) == [1, 2, 4, 8, 16, 30, 30, 30]


def test_a_healthy_run_resets_the_delay() -> None:
    assert schedule([(0, 1), (10, 1), (20, 1), (100, 10.0), (200, 1)]) == [1, 2, 4, 1, 2]


@pytest.mark.parametrize(("max_restarts", "window", "times", "expected"), [
    (3, 60, [0, 5, 10, 20], [1, 2, 4, None]),  # a 4th restart inside 60 s: give up
    (3, 60, [0, 5, 10, 200], [1, 2, 4, 8]),  # the window has moved on
    (0, 60, [0], [None]),  # --max-restarts 0: never restart
])
def test_crash_loop_limit(max_restarts: int, window: float, times: list[float],
                          expected: list[float | None]) -> None:
    assert schedule([(t, 0.1) for t in times], max_restarts=max_restarts,
                    window=window) == expected
