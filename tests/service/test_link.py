"""The hook service's end of its channel to root's supervisor (initd/service/link.py),
over a real socketpair, the supervisor's end played by the test: the latest state kept,
each reply to its own request, a cancel passed on once, and no answer a refusal, never
an approval."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from initd.config import log
from initd.errors import InitdError
from initd.process.channel import Channel
from initd.service.link import LinkDown, SupervisorLink
from tests.support.harness import wait_for


@pytest.fixture
def ends() -> Iterator[tuple[Channel, SupervisorLink]]:
    supervisor, fd = Channel.pair()
    link = SupervisorLink(Channel.from_fd(fd), log.get())
    yield supervisor, link
    supervisor.close()


def answering(supervisor: Channel, reply: dict[str, object]) -> list[dict[str, object]]:
    """The supervisor answers every request with ``reply``; returns what it was sent."""
    seen: list[dict[str, object]] = []

    def serve() -> None:
        while True:
            messages = supervisor.receive()
            if messages is None:
                return
            for message in messages:
                seen.append(message)
                if "id" in message and message.get("op") != "cancel":
                    supervisor.send({"op": "reply", "id": message["id"], **reply})
    threading.Thread(target=serve, daemon=True).start()
    return seen


def test_the_latest_state_and_ready(ends: tuple[Channel, SupervisorLink]) -> None:
    supervisor, link = ends
    supervisor.send({"op": "state", "agent": {"ready": False}})
    supervisor.send({"op": "state", "agent": {"ready": True}})
    wait_for(lambda: link.state.get("agent") == {"ready": True}, what="the latest state")
    seen = answering(supervisor, {})
    link.ready()
    wait_for(lambda: seen, what="ready sent")
    assert seen[0]["op"] == "ready"


def test_trust_verdicts(ends: tuple[Channel, SupervisorLink]) -> None:
    supervisor, link = ends
    answering(supervisor, {"trusted": True})
    assert link.trust_verdict("/ws/a.sh", "a" * 64) is None


def test_no_answer_is_a_refusal(ends: tuple[Channel, SupervisorLink]) -> None:
    supervisor, link = ends
    answering(supervisor, {"trusted": "yes"})  # not True: no
    assert link.trust_verdict("/ws/a.sh", "a" * 64) == "not trusted: no answer"
    supervisor.close()
    wait_for(lambda: link.down, what="the link down")
    said = link.trust_verdict("/ws/a.sh", "a" * 64)
    assert said is not None and said.startswith("not trusted: not checked")
    with pytest.raises(LinkDown):
        link.request("precommit")


def test_precommit_rewrites(ends: tuple[Channel, SupervisorLink]) -> None:
    supervisor, link = ends
    answering(supervisor, {"result": "rewritten"})
    assert link.refresh_precommit() == (True, "rewritten")


@pytest.mark.parametrize(("reply", "expected"), [
    ({"refused": "the repository is root's"}, (False, "the repository is root's")),
    ({"error": "busy"}, InitdError)])
def test_precommit_refused_or_failed(ends: tuple[Channel, SupervisorLink],
                                     reply: dict[str, object], expected: object) -> None:
    supervisor, link = ends
    answering(supervisor, reply)
    if expected is InitdError:
        with pytest.raises(InitdError, match="busy"):
            link.refresh_precommit()
    else:
        assert link.refresh_precommit() == expected


def test_a_cancel_is_passed_on_once(ends: tuple[Channel, SupervisorLink]) -> None:
    supervisor, link = ends
    seen: list[dict[str, object]] = []
    cancel = threading.Event()
    cancel.set()

    def serve() -> None:
        while (messages := supervisor.receive()) is not None:
            for message in messages:
                seen.append(message)
                if message.get("op") == "cancel":  # answer once the cancel came
                    supervisor.send({"op": "reply", "id": message["id"], "done": 1})
    threading.Thread(target=serve, daemon=True).start()
    assert link.request("turn", cancel=cancel)["done"] == 1
    assert [m["op"] for m in seen] == ["turn", "cancel"]
