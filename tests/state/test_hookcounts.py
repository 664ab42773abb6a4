"""state/hookcounts.py: what the hook service says it counted is the agent's word. Root
reads it with a total parser (what is not ours is left out, entry by entry, bounded) and
keeps totals that never go backwards, across the service's restarts too."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from initd.state import hookcounts
from initd.state.hookcounts import BUCKETS, MAX_COUNT, MAX_SERIES, Counts, Tally, parse

ONE = [1] + [0] * len(BUCKETS)  # one hook, in the first bucket


def counts(**fields: object) -> Counts:
    return Counts(**{"durations": {}, "decisions": {}, **fields})  # type: ignore[arg-type]


def test_a_summary_read_back_is_what_was_sent() -> None:
    sent = counts(durations={("claude", "pre_tool"): ((2, *[0] * len(BUCKETS)), 0.25)},
                  decisions={("claude", "block"): 1}, failed=3, timed_out=1, journaled=4,
                  replayed=5)
    assert parse(json.loads(json.dumps(sent.wire()))) == sent


def test_what_is_not_ours_is_left_out_entry_by_entry() -> None:
    good = ["claude", "pre_tool", ONE, 0.1]
    raw = {"durations": [
        good,
        ["claude", "stop", ONE[:-1], 0.1],  # a bucket short
        ["bad label\n", "stop", ONE, 0.1],  # not a name
        ["x" * 33, "stop", ONE, 0.1],  # too long
        ["claude", "post", [-1, *ONE[1:]], 0.1],  # a negative count
        ["claude", "post", [True, *ONE[1:]], 0.1],  # a bool is no count
        ["claude", "post", [MAX_COUNT + 1, *ONE[1:]], 0.1],
        ["claude", "post", ONE, float("nan")],
        ["claude", "post", ONE, "1"],
        ["claude", "post", ONE], "not a list", None, 7],
        "decisions": [["claude", "block", 2], ["claude", "allow", 1.5], [1, "x", 1]],
        "failed": -4, "timedOut": "9", "journaled": 2**60, "replayed": [1], "extra": {}}
    assert parse(raw) == counts(durations={("claude", "pre_tool"): (tuple(ONE), 0.1)},
                                decisions={("claude", "block"): 2})


@settings(max_examples=300)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner, max_size=6)
                    | st.dictionaries(st.sampled_from(["durations", "decisions", "failed",
                                                       "timedOut", "journaled", "x"]),
                                      inner, max_size=6), max_leaves=40))
def test_parse_is_total(raw: object) -> None:
    got = parse(raw)  # never raises
    assert len(got.durations) <= MAX_SERIES and len(got.decisions) <= MAX_SERIES
    assert all(0 <= n <= MAX_COUNT for n in got[2:])
    assert all(math.isfinite(total) for _, total in got.durations.values())


def test_label_sets_past_the_bound_are_left_out() -> None:
    raw = {"decisions": [["f", f"d{n}", 1] for n in range(MAX_SERIES * 3)]}
    assert list(parse(raw).decisions) == [("f", f"d{n}") for n in range(MAX_SERIES)]


def test_totals_never_go_backwards_and_go_on_across_restarts() -> None:
    tally = Tally()
    tally.said(counts(failed=5, decisions={("c", "block"): 3}).wire(), now=0)
    tally.said(counts(failed=2).wire(), now=1)  # (a lie, or a restart not seen yet)
    assert tally.totals.failed == 5 and tally.totals.decisions == {("c", "block"): 3}
    tally.restarted(now=2)  # the next service counts from 0: root's totals go on from 5
    tally.said(counts(failed=1, decisions={("c", "block"): 1}).wire(), now=2)
    assert tally.totals.failed == 6 and tally.totals.decisions == {("c", "block"): 4}


def test_a_summary_sooner_than_its_pace_waits_unread_and_the_latest_is_taken() -> None:
    tally = Tally()
    tally.said(counts(failed=1).wire(), now=10.0)
    assert tally.due(10.0) is None
    for failed in (7, 8, 9):  # a flood: kept, unread, each in place of the last
        tally.said(counts(failed=failed).wire(), now=10.1)
    assert tally.totals.failed == 1 and tally.due(10.1) == pytest.approx(Tally.EVERY - 0.1)
    tally.take(10.2)  # not yet
    assert tally.totals.failed == 1
    tally.take(10.0 + Tally.EVERY)
    assert tally.totals.failed == 9 and tally.due(11.0) is None


def test_a_null_summary_is_taken_as_an_empty_one() -> None:
    tally = Tally()
    tally.said(None, now=0.0)
    assert tally.due(0.0) is None and tally.totals == hookcounts.empty()


def test_a_summary_kept_when_the_service_restarts_is_its_last_word() -> None:
    tally = Tally()
    tally.said(counts(failed=1).wire(), now=0.0)
    tally.said(counts(failed=4).wire(), now=0.1)  # kept
    tally.restarted(now=0.2)
    tally.said(counts(failed=1).wire(), now=0.3)
    assert tally.totals.failed == 5


def test_the_largest_summary_fits_the_channels_line() -> None:
    """What an honest service may send, every label its longest and every count its
    largest, is one line the channel takes (a longer one restarts the service)."""
    from initd.process.channel import MAX_REQUEST

    name = "x" * 32
    largest = counts(
        durations={(f"{n:02}" + name[2:], name): ((MAX_COUNT,) * (len(BUCKETS) + 1),
                                                  float(MAX_COUNT) / 3)
                   for n in range(MAX_SERIES)},
        decisions={(f"{n:02}" + name[2:], name): MAX_COUNT for n in range(MAX_SERIES)},
        failed=MAX_COUNT, timed_out=MAX_COUNT, journaled=MAX_COUNT, replayed=MAX_COUNT)
    line = json.dumps({"op": "metrics", "counts": largest.wire()}, separators=(",", ":"))
    assert parse(json.loads(line)["counts"]) == largest
    assert len(line) < MAX_REQUEST, len(line)


def test_sums_are_capped() -> None:
    big = counts(failed=MAX_COUNT)
    assert hookcounts.combined(big, big, hookcounts._sum).failed == MAX_COUNT
