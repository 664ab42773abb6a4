"""supervisor/pace.py: the token bucket that bounds what the agent can make root do over
the hook service's channel. Its arithmetic, on a clock the test moves by hand: no sleep,
no elapsed time measured."""

from __future__ import annotations

import pytest

from initd.supervisor.pace import Bucket
from initd.supervisor.serviceops import BATCH, BURST, PRECOMMIT_BURST, PRECOMMIT_EVERY, RATE


class Clock:
    """Seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now = 1024.0  # (a power of two: sums of 1/64 stay exact)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_it_starts_full_and_gives_burst_tokens_then_none() -> None:
    clock = Clock()
    bucket = Bucket(rate=2.0, burst=3, clock=clock)
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    assert not bucket.ready()
    assert bucket.wait() == pytest.approx(0.5)  # one token at 2 a second


def test_tokens_come_back_at_the_rate_and_never_past_the_burst() -> None:
    clock = Clock()
    bucket = Bucket(rate=4.0, burst=2, clock=clock)
    assert bucket.take() and bucket.take() and not bucket.take()
    clock.advance(0.25)  # one token
    assert bucket.take() and not bucket.take()
    clock.advance(3600)  # an hour idle: still two at most
    assert [bucket.take() for _ in range(3)] == [True, True, False]


def test_a_fraction_of_a_token_is_kept_not_lost() -> None:
    clock = Clock()
    bucket = Bucket(rate=1.0, burst=1, clock=clock)
    assert bucket.take()
    for _ in range(3):  # a quarter of a token at a time: none yet, each time asked
        clock.advance(0.25)
        assert not bucket.take()
    assert bucket.wait() == 0.25
    clock.advance(0.25)
    assert bucket.take()


def test_ready_and_wait_take_nothing() -> None:
    clock = Clock()
    bucket = Bucket(rate=8.0, burst=4, clock=clock)
    for _ in range(10):
        assert bucket.ready(4)
        assert bucket.wait(4) == 0.0
    assert [bucket.take() for _ in range(5)] == [True] * 4 + [False]


# (the times are exact in binary, as a clock's ticks are not: wait's answer, added to a
# clock, may then fall a rounding error short, which a poll's whole milliseconds cover)
@pytest.mark.parametrize(("taken", "want", "seconds"), [
    (0, 1, 0.0), (4, 1, 0.125), (4, 4, 0.5), (2, 3, 0.125), (1, 4, 0.125)])
def test_wait_says_when_that_many_tokens_will_be_there(taken: int, want: int,
                                                      seconds: float) -> None:
    clock = Clock()
    bucket = Bucket(rate=8.0, burst=4, clock=clock)
    for _ in range(taken):
        assert bucket.take()
    assert bucket.wait(want) == seconds
    if seconds:
        clock.advance(seconds / 2)
        assert not bucket.ready(want)
        clock.advance(seconds / 2)
    assert bucket.ready(want)
    assert [bucket.take() for _ in range(want)] == [True] * want


def test_more_than_the_burst_is_never_ready() -> None:
    clock = Clock()
    bucket = Bucket(rate=8.0, burst=4, clock=clock)
    clock.advance(3600)
    assert bucket.ready(4) and not bucket.ready(5)


def test_the_channel_rate_serviceops_sets() -> None:
    """What root reads from the hook service's channel: BURST messages at once, then
    RATE a second; the loop waits for BATCH of them before it reads again."""
    clock = Clock()
    bucket = Bucket(RATE, BURST, clock=clock)
    taken = 0
    while bucket.take():
        taken += 1
    assert taken == BURST
    assert not bucket.ready(BATCH)
    assert bucket.wait(BATCH) == pytest.approx(BATCH / RATE)
    clock.advance(BATCH / RATE * 1.001)
    assert bucket.ready(BATCH)
    # a minute of a flood, asked every 1/64 s (exact in binary: no rounding to count):
    # RATE a second, whatever is asked
    for _ in range(60 * 64):
        clock.advance(1 / 64)
        taken += bucket.take()
    assert taken == BURST + BATCH + 60 * RATE


def test_the_precommit_rewrites_serviceops_allows() -> None:
    clock = Clock()
    bucket = Bucket(1 / PRECOMMIT_EVERY, PRECOMMIT_BURST, clock=clock)
    assert [bucket.take() for _ in range(PRECOMMIT_BURST + 1)] == \
        [True] * PRECOMMIT_BURST + [False]
    clock.advance(PRECOMMIT_EVERY * 0.99)
    assert not bucket.take()
    clock.advance(PRECOMMIT_EVERY * 0.01)
    assert bucket.take() and not bucket.take()
