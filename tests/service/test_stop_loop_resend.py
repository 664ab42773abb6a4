"""Claude Code's Stop loop across a kill -9 and a resend: the count of Stops blocked in a
row is a step of the Stop's own request (events/stoploop.py, hooks/ledger.py), so a Stop
sent again with its key is counted once. Before, a Stop killed after its count was kept
and before its answer was counted twice: the Stops' exit codes went ``[2, 2, 0, 2]`` (the
cap reached one Stop early, then a reset) where they should be ``[2, 2, 2, 0]``.

Here: a user prompt, then nine Stops that a Claude Code Stop hook always blocks (exit 2),
the cap being Claude Code's 8. The 8th Stop is killed at each of its writes in turn (its
journal lines, the ledger's line, the session record, the hook's own): every time, the
first eight are blocked and the ninth goes through, each hook saw ``stop_hook_active``
as it should, and no hook ran twice for one Stop. A real service, really killed (-9),
sent again over its real socket (tests/service/kills.py)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from initd.events.stoploop import CAP
from tests.hooks.support import forget_session
from tests.service import torture

KILLED = CAP  # the round's index of the 8th Stop (the user prompt is 0)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_stop_killed_at_any_step_and_sent_again_is_counted_once(tmp_path: Path) -> None:
    sid = f"stops-{uuid.uuid4().hex[:8]}"
    session = torture.Session(tmp_path, sid)
    try:
        for point in range(1, 60):
            kinds = ["prompt"] + ["stop"] * (CAP + 1)
            round_ = [torture.plan(kind, f"r{point}-{i}-{kind}",
                                   writes=(point,) if i == KILLED else ())
                      for i, kind in enumerate(kinds)]
            session.pending = list(round_)
            kills = session.service.kills
            session.start()
            answers = [session.send(plan) for plan in round_]
            assert session.model.wrong == [], (point, session.model.wrong)
            # [2, 2, 2, 0] at the end, never [2, 2, 0, 2]
            assert [a["blocked"] for a in answers[1:]] == [True] * CAP + [False], point
            assert all(a["journaled"] for a in answers)
            if session.service.kills == kills:
                break  # past the Stop's last write: every one was a kill
            assert answers[KILLED]["replayed"] is False  # (sent again: composed again)
        else:
            pytest.fail("the sweep did not end")
        assert point > 4, "too few steps killed"
        assert session.bench.duplicates() == {}
    finally:
        session.service.stop()
        forget_session(sid)
