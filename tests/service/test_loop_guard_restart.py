"""The re-prompt loop guard survives a hook service restart: the count made since the
last user turn is kept (``hooks/reprompts.json``) before the agent is told the attempt,
so a service killed with -9 goes on from it instead of starting again at 1. What the
agent may leave in that file (garbage, a count past the limit, a link to a root file)
gives it no more re-prompts than a count of 0 would, and touches nothing of root's."""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hooks.support import ROOT_HOME, checker, forget_session, git_repo, settle
from tests.service.support import call, start


class Session:
    def __init__(self, tmp: Path) -> None:
        self.repo = git_repo(tmp / "ws", identity=False)
        self.sid = f"guard-{uuid.uuid4().hex[:8]}"
        self.sock = str(tmp / "initd.sock")
        self.kept = Path(ROOT_HOME, ".discobot", self.sid, "hooks", "reprompts.json")
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


@pytest.mark.parametrize("planted", ["garbage{", '{"count": -5}', '{"count": "2"}',
                                     '{"count": 99}', "[]", "link"])
def test_what_the_agent_leaves_there_buys_no_more_reprompts(session: Session,
                                                             tmp_path: Path,
                                                             planted: str) -> None:
    canary = tmp_path / "root-canary"
    canary.write_text("root's\n")
    session.kept.parent.mkdir(parents=True, exist_ok=True)
    if planted == "link":
        session.kept.symlink_to(canary)
    else:
        session.kept.write_text(planted)
    service = start(session.sock, str(session.repo), session.sid)
    try:
        attempts = [session.turn("hook")[1] for _ in range(4)]
        # garbage counts as 0 (three more at most); 99 as the limit (none more)
        assert attempts == ([None] * 4 if planted == '{"count": 99}' else [1, 2, 3, None])
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(10)
    assert canary.read_text() == "root's\n"
    assert not session.kept.is_symlink()
