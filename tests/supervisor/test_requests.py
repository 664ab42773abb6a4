"""supervisor/requests.py: what the hook service (the agent's, invariant 8) may ask root
over its channel, checked before anything is done: the op, its fields, their types, and
a request id not already running. A problem says what is wrong in a few words, never the
message's data."""

from __future__ import annotations

from typing import Any

import pytest

from initd.hooks.truststore import KEY_LIMIT
from initd.supervisor.requests import problem

DIGEST = "a" * 64


@pytest.mark.parametrize("message", [
    {"op": "ready"},
    {"op": "ready", "pid": 1234},
    {"op": "cancel", "id": 7},
    {"op": "precommit", "id": 1},
    {"op": "precommit", "id": 2**53 - 1},
    {"op": "trust", "id": 3, "key": "/ws/.discobot/hooks/a.sh", "digest": DIGEST},
    {"op": "trust", "id": 3, "key": "k" * KEY_LIMIT, "digest": DIGEST},
], ids=lambda m: m["op"])
def test_each_op_as_the_service_sends_it_is_ours(message: dict[str, Any]) -> None:
    assert problem(message, running=set()) is None


@pytest.mark.parametrize(("message", "why"), [
    ({}, "an unknown op None"),
    ({"op": None}, "an unknown op None"),
    ({"op": 1}, "an unknown op 1"),
    ({"op": ["ready"]}, "an unknown op ['ready']"),
    ({"op": "state"}, "an unknown op 'state'"),  # root's own op, never the service's
    ({"op": "reply", "id": 1}, "an unknown op 'reply'"),
    ({"op": "READY"}, "an unknown op 'READY'"),
    ({"op": "run", "hook": "x"}, "an unknown op 'run'"),  # root runs no hook for it
])
def test_an_op_that_is_not_one_of_ours(message: dict[str, Any], why: str) -> None:
    assert problem(message, running=set()) == why


def test_an_unknown_op_is_shown_cut_short() -> None:
    said = problem({"op": "x" * 10_000}, running=set())
    assert said is not None and said.startswith("an unknown op 'xxx")
    assert len(said) < 60


@pytest.mark.parametrize("message", [
    {"op": "ready", "pid": 1, "id": 2},
    {"op": "cancel", "id": 1, "key": "k"},
    {"op": "precommit", "id": 1, "argv": ["sh", "-c", "id"]},
    {"op": "precommit", "id": 1, "cwd": "/root"},
    {"op": "trust", "id": 1, "key": "k", "digest": DIGEST, "approve": True},
], ids=lambda m: m["op"])
def test_a_field_the_op_does_not_have(message: dict[str, Any]) -> None:
    assert problem(message, running=set()) == \
        f"a {message['op']} message with fields it does not have"


@pytest.mark.parametrize("pid", [0, -1, 2**53, True, False, 1.5, "123", [1], {}])
def test_a_ready_message_with_a_bad_pid(pid: object) -> None:
    assert problem({"op": "ready", "pid": pid}, running=set()) == \
        "a ready message with a bad pid"


@pytest.mark.parametrize("op", ["cancel", "precommit", "trust"])
@pytest.mark.parametrize("request_id", [None, 0, -3, 2**53, True, 1.0, "1", [1]])
def test_a_request_without_a_whole_positive_id(op: str, request_id: object) -> None:
    message: dict[str, Any] = {"op": op, "key": "k", "digest": DIGEST} if op == "trust" \
        else {"op": op}
    if request_id is not None:
        message["id"] = request_id
    assert problem(message, running=set()) == f"a {op} message without a request id"


@pytest.mark.parametrize("op", ["precommit", "trust"])
def test_a_request_reusing_the_id_of_one_still_running(op: str) -> None:
    message: dict[str, Any] = {"op": op, "id": 5}
    if op == "trust":
        message |= {"key": "k", "digest": DIGEST}
    assert problem(message, running={5}) == f"a {op} request reusing the id of one still running"
    assert problem(message, running={4, 6}) is None  # another id: fine
    assert problem(message, running={5: object()}) is not None  # (a mapping of runs too)


def test_a_cancel_names_the_id_of_one_running() -> None:
    assert problem({"op": "cancel", "id": 5}, running={5}) is None
    assert problem({"op": "cancel", "id": 9}, running={5}) is None  # (done meanwhile: fine)


@pytest.mark.parametrize(("key", "digest"), [
    (None, DIGEST), ("", DIGEST), ("k" * (KEY_LIMIT + 1), DIGEST), (["k"], DIGEST),
    ("k", None), ("k", ""), ("k", "A" * 64), ("k", "a" * 63), ("k", "a" * 65),
    ("k", "g" * 64), ("k", DIGEST + "\n"), ("k", 123),
])
def test_a_trust_request_without_a_key_and_a_sha256(key: object, digest: object) -> None:
    message: dict[str, Any] = {"op": "trust", "id": 1}
    if key is not None:
        message["key"] = key
    if digest is not None:
        message["digest"] = digest
    assert problem(message, running=set()) == "a trust request without a key and a sha256"


def test_a_problem_never_carries_the_messages_data() -> None:
    """What the agent wrote goes to root's log as a few words, not as it was sent (a
    forged log line, a secret echoed, a megabyte)."""
    secret = "TOKEN-\n{\"level\": \"error\", \"event\": \"forged\"}"
    messages: list[dict[str, Any]] = [
        {"op": "precommit", "id": 1, secret: 1},
        {"op": "trust", "id": 1, "key": secret, "digest": secret},
        {"op": "cancel", "id": secret},
        {"op": "ready", "pid": secret},
    ]
    for message in messages:
        said = problem(message, running=set())
        assert said is not None and "TOKEN" not in said and "\n" not in said
