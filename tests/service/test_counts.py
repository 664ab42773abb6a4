"""service/counts.py: the hook service counts each hook an event or a turn ran, and
sends root its totals when they changed, at most once every EVERY seconds."""

from __future__ import annotations

import threading
from typing import Any

from initd.service import counts
from initd.state.hookcounts import BUCKETS, parse


def outcome(*results: dict[str, Any]) -> dict[str, Any]:
    return {"event": "pre_tool", "results": list(results)}


def test_each_hook_of_an_event_by_format_event_and_what_it_decided() -> None:
    counter = counts.Counter()
    counter.event(outcome(
        {"dialect": "claude", "status": "blocked", "durationMs": 3.0, "timedOut": False},
        {"dialect": "claude", "status": "error", "durationMs": 2000.0, "timedOut": True},
        {"dialect": "nyzhi", "status": "ok", "durationMs": 10.0, "decision": "approve"},
        {"dialect": "nyzhi", "status": "untrusted", "durationMs": 0.0}), journaled=True)
    counter.replayed()
    got = counter.summary()
    buckets, total = got.durations[("claude", "pre_tool")]
    assert sum(buckets) == 2 and total == 2.003
    assert buckets[0] == 1 and buckets[BUCKETS.index(2.5)] == 1  # 3 ms; 2 s (le 2.5)
    assert got.durations[("nyzhi", "pre_tool")][0][BUCKETS.index(0.01)] == 1  # le: its bound
    assert got.decisions == {("claude", "block"): 1, ("claude", "none"): 1,
                             ("nyzhi", "approve"): 1}
    assert (got.failed, got.timed_out, got.journaled, got.replayed) == (1, 1, 1, 1)
    assert parse(got.wire()) == got  # what root reads back


def test_a_turns_file_hooks() -> None:
    counter = counts.Counter()
    counter.turn({"results": [{"success": False, "durationMs": 50.0, "timedOut": False},
                              {"success": True, "durationMs": 1.0},
                              {"refused": "changed", "durationMs": 0.0}]})
    got = counter.summary()
    assert sum(got.durations[counts.FILE_HOOKS][0]) == 2 and got.failed == 1


def test_the_summary_goes_when_it_changed_and_stops_with_the_link() -> None:
    counter = counts.Counter()
    sent: list[dict[str, Any]] = []
    went = threading.Event()

    def send(message: dict[str, Any]) -> bool:
        sent.append(message)
        went.set()
        return len(sent) < 2  # the second finds the supervisor gone

    thread = counts.report(send, counter, every=0.01)
    assert not went.wait(0.1)  # nothing counted, nothing sent
    counter.replayed()
    assert went.wait(30)
    assert sent[0]["op"] == "metrics" and sent[0]["counts"]["replayed"] == 1
    counter.replayed()
    thread.join(30)
    assert not thread.is_alive() and len(sent) == 2
