"""The re-prompt loop guard across a kill -9: the count is what the turns recorded since
the last user turn (hooks/ledger.py, in the journal's directory), and a turn's step is
its count, in one line. So a service killed at any step of a turn, the turn sent again
with its key, gives each re-prompt once: never the previous attempt again, never
``loop-guard`` for the first, never a user turn that did not reset. What the agent may
leave in the ledger gives it no more re-prompts than a count of 0 would, and touches
nothing of root's."""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hooks.support import ROOT_HOME, checker, forget_session, git_repo, settle
from tests.service import torture
from tests.service.support import call, start

# The writes a kill lands before: the request's journal lines, the ledgers' lines, and
# what an older initd kept beside the journal (reprompts.json, stop-loop.json): every
# step a count could be lost or doubled between.
COUNTED = r"\.jsonl$|\.steps|reprompts|stop-loop"


class Session:
    def __init__(self, tmp: Path) -> None:
        self.repo = git_repo(tmp / "ws", identity=False)
        self.sid = f"guard-{uuid.uuid4().hex[:8]}"
        self.sock = str(tmp / "initd.sock")
        self.kept = Path(ROOT_HOME, ".discobot", self.sid, "journal", "loop-guard.steps")
        checker(self.repo, "10-a.sh", "*.a", "BAD", name="Hook-A")
        (self.repo / "x.a").write_text("BAD\n")
        settle()

    def turn(self, trigger: str) -> tuple[str, int | None, str]:
        answer = call(self.sock, "POST", "/v1/turn", {"trigger": trigger})[1]
        return answer["action"], answer["attempt"], answer["evaluation"]


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    made = Session(tmp_path)
    yield made
    forget_session(made.sid)


@pytest.mark.slow
def test_a_killed_service_goes_on_counting(session: Session) -> None:
    service = start(session.sock, str(session.repo), session.sid)
    assert session.turn("user") == ("reprompt", 1, "reprompt")
    assert session.turn("hook") == ("reprompt", 2, "reprompt")
    service.send_signal(signal.SIGKILL)  # between two re-prompts of one user message
    service.wait(10)
    os.unlink(session.sock)
    service = start(session.sock, str(session.repo), session.sid)
    try:
        assert session.turn("hook") == ("reprompt", 3, "reprompt")  # not 1 again
        assert session.turn("hook") == ("none", None, "loop-guard")
        assert session.turn("user") == ("reprompt", 1, "reprompt")  # a user turn resets
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(10)


@pytest.mark.slow
@pytest.mark.parametrize("planted", ["garbage{", '{"state": {"count": -5}}',
                                     '{"state": {"count": "2"}}', '{"state": {"count": 99}}',
                                     '{"state": [3]}', "[]", "link"])
def test_what_the_agent_leaves_there_buys_no_more_reprompts(session: Session,
                                                             tmp_path: Path,
                                                             planted: str) -> None:
    canary = tmp_path / "root-canary"
    canary.write_text("root's\n")
    session.kept.parent.mkdir(parents=True, exist_ok=True)
    if planted == "link":
        session.kept.symlink_to(canary)
    else:
        session.kept.write_text(planted + "\n")
    service = start(session.sock, str(session.repo), session.sid)
    try:
        attempts = [session.turn("hook")[1] for _ in range(4)]
        # garbage counts as 0 (three more at most); 99 as the limit (none more)
        assert attempts == ([None] * 4 if "99" in planted else [1, 2, 3, None])
        health = call(session.sock, "GET", "/v1/health")[1]
        assert health["status"] == "ok", health  # (a link read: replaced when written)
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(10)
    assert canary.read_text() == "root's\n"
    assert not session.kept.is_symlink()


# The three: each turn is killed in turn at every one of its steps (a fresh round
# of turns each time, in one session), sent again with its key, and the round goes on.
SWEEPS = {
    # [1, 1, 2, 3, loop-guard]: the previous attempt given again
    "a later re-prompt": (("user_turn", "turn", "turn", "turn"), 1),
    # loop-guard at once
    "the first re-prompt": (("user_turn", "turn", "turn", "turn"), 0),
    # a user turn that never resets: loop-guard for the next
    "a user turn's reset": (("user_turn", "turn", "turn", "turn", "user_turn", "turn"), 4),
}


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("sweep", SWEEPS)
def test_a_turn_killed_at_any_step_counts_once_when_sent_again(tmp_path: Path,
                                                               sweep: str) -> None:
    kinds, killed = SWEEPS[sweep]
    sid = f"sweep-{uuid.uuid4().hex[:8]}"
    session = torture.Session(tmp_path, sid)
    try:
        for point in range(1, 60):
            round_ = [torture.plan(kind, f"r{point}-{i}-{kind}", count=COUNTED,
                                   writes=(point,) if i == killed else ())
                      for i, kind in enumerate(kinds)]
            session.pending = list(round_)
            kills = session.service.kills
            session.start()
            answers = [session.send(plan) for plan in round_]
            assert session.model.wrong == [], (point, answers)
            if session.service.kills == kills:
                break  # past the turn's last step: every step was a kill
        else:
            pytest.fail("the sweep did not end")
        assert point > 4, "too few steps killed"
        assert session.bench.duplicates() == {}
    finally:
        session.service.stop()
        forget_session(sid)
