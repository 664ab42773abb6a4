"""The control API's client (initd/commands/client.py), which root's verbs and every exec
probe run against a service that is the agent's: whatever the service answers is a
status and a body or one line saying what went wrong (never a traceback, never a line
forged by a newline); nothing a caller passes is written into a request's head
unchecked; a request with a key is sent again when a dying service cut its answer."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from initd.commands import client
from initd.errors import InitdError
from tests.support.fakeservice import Answer, http, json_answer, serving


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Callable[[Answer], str]]:
    """Start stand-ins for the service: ``service(answer)`` is a socket's path."""
    made = iter(range(1000))
    with ExitStack() as stack:
        def start(answer: Answer) -> str:
            path = str(tmp_path / f"s{next(made)}.sock")
            stack.enter_context(serving(path, answer))
            return path
        yield start


def test_a_call_and_its_request(service: Callable[[Answer], str]) -> None:
    seen: list[bytes] = []
    path = service(lambda req: seen.append(req) or http("200 OK", b'{"ok": true}'))
    assert client.call("POST", "/v1/turn", {"trigger": "user"}, sock=path, key="k1") == (
        200, {"ok": True})
    head, _, body = seen[0].partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"POST /v1/turn HTTP/1.0"
    assert b"Idempotency-Key: k1" in head and body == b'{"trigger": "user"}'


@pytest.mark.parametrize("raw", [
    b"", b"garbage", "HTTP/1.0 ²00 OK\r\n\r\n{}".encode(), b"HTTP/1.0 200 OK\r\n{}",
    http("200 OK", b"{}", length=10),  # cut before its end
    b"HTTP/1.0 200 OK\r\nContent-Length: \xb2\r\n\r\n{}" + b"x" * 0,
    http("200 OK", b"[" * 100_000), http("200 OK", b"not json"),
])
def test_whatever_the_service_answers_is_one_line(service: Callable[[Answer], str],
                                                  raw: bytes) -> None:
    path = service(lambda req: raw)
    try:
        code, _ = client.call("GET", "/v1/status", sock=path)
    except InitdError as err:
        assert "\n" not in str(err) and "hook service" in str(err)
    else:
        assert code == 200  # (a Content-Length that is no number is not believed)


@given(st.binary(max_size=300))
@example(b"HTTP/1.0 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n")
def test_any_answer_is_parsed_or_incomplete(raw: bytes) -> None:
    ours, theirs = socket.socketpair()
    try:
        theirs.sendall(raw)
        theirs.shutdown(socket.SHUT_WR)  # (the answer ends; our request is still read)
        try:
            code, body = client._exchange(ours, b"")
        except client.Incomplete:
            return
        assert 0 <= code <= 999 and isinstance(body, bytes)
    finally:
        ours.close()
        theirs.close()


def test_an_answer_past_max_answer_is_incomplete(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "MAX_ANSWER", 10)
    ours, theirs = socket.socketpair()
    theirs.sendall(http("200 OK", b"x" * 100))
    theirs.shutdown(socket.SHUT_WR)
    with pytest.raises(client.Incomplete, match="over 10 bytes"):
        client._exchange(ours, b"")
    ours.close()
    theirs.close()


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/v1/hooks/x\r\nHost: evil/output"), ("GET", "/v1 /x"), ("GET", "v1/x"),
    ("GE T", "/v1"), ("get", "/v1"), ("GET", "/v1/é"), ("GET\r\n", "/v1")])
def test_nothing_a_caller_passes_reaches_the_head_unchecked(method: str, path: str) -> None:
    with pytest.raises(InitdError, match="not sent"):
        client.raw(method, path, sock="/nonexistent")


@pytest.mark.parametrize("key", ["", "a b", "x" * 201, "k\r\nX: 1"])
def test_a_key_that_is_no_key_is_not_sent(key: str) -> None:
    with pytest.raises(InitdError, match="not sent"):
        client.call("POST", "/v1/turn", {}, sock="/nonexistent", key=key)


def test_a_cut_answer_is_sent_again_with_its_key(service: Callable[[Answer], str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client.time, "sleep", lambda seconds: None)  # (the pause only)
    answers = [http("200 OK", b"{}", length=50), None, http("200 OK", b'{"n": 3}')]
    path = service(lambda req: answers.pop(0))
    assert client.call("POST", "/v1/turn", {}, sock=path, key="k") == (200, {"n": 3})
    assert answers == []
    cut = service(lambda req: http("200 OK", b"{}", length=50))
    with pytest.raises(InitdError, match="stopped in the middle of its answer"):
        client.call("POST", "/v1/turn", {}, sock=cut)  # no key: not sent again


def test_no_room_for_a_body_is_waited_out_with_its_key(service: Callable[[Answer], str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """503 "try again": the service had no room for the body (other large requests at
    work). A keyed request (an event, a turn) is sent again until there is, within
    BUSY_WAIT: a second large event at once is never a guard's block for that alone."""
    monkeypatch.setattr(client.time, "sleep", lambda seconds: None)
    busy = json_answer(503, {"error": "too many large requests at once; try again"})
    answers = [busy, busy, json_answer(200, {"results": []})]
    path = service(lambda req: answers.pop(0))
    assert client.call("POST", "/v1/events/pre_tool", {}, sock=path, key="k") == (
        200, {"results": []})
    other = service(lambda req: json_answer(503, {"error": "the service is stopping"}))
    assert client.call("POST", "/v1/events/pre_tool", {}, sock=other, key="k")[0] == 503
    clock = iter(range(0, 10_000, 10))  # (ten seconds a look: past BUSY_WAIT soon)
    monkeypatch.setattr(client.time, "monotonic", lambda: float(next(clock)))
    always = service(lambda req: busy)
    assert client.call("POST", "/v1/events/pre_tool", {}, sock=always, key="k")[0] == 503


def test_no_service_and_no_answer_say_so(service: Callable[[Answer], str],
                                         tmp_path: Path) -> None:
    with pytest.raises(InitdError, match=r"no hook service at .*; is initd running"):
        client.call("GET", "/v1/health", sock=str(tmp_path / "none.sock"))
    gate = threading.Event()  # (opened once seen: the stand-in's thread ends with the test)
    silent = service(lambda req: (gate.wait(60), None)[1])
    try:
        with pytest.raises(InitdError,
                           match=r"no answer from the hook service .* within 0\.2s"):
            client.call("GET", "/v1/health", sock=silent, timeout=0.2)
    finally:
        gate.set()
    said = client.trust_verdict("/ws/a.sh", "a" * 64)
    assert said is not None and said.startswith("not trusted: not checked")


def test_a_reason_is_one_line_of_ours_and_cut() -> None:
    assert client.reason({"error": "no\nerror: forged"}) == "initd: no\\nerror: forged"
    long = client.reason({"error": "x" * 10_000})
    assert len(long) == len("initd: ") + client.REASON_SHOWN + 1 and long.endswith("…")
    assert client.reason("plain") == "initd: plain"
    with pytest.raises(InitdError, match="HTTP 422: reused"):
        client.refused_key(422, {"error": "reused"})
    client.refused_key(200, {})


def test_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert client.show(200, {"a": 1}) == 0 and capsys.readouterr().out == '{\n  "a": 1\n}\n'
    assert client.show(500, {"error": "broken"}) == 1
    assert capsys.readouterr().err == "initd: broken\n"


def test_the_socket_a_verb_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    assert client.socket_path("/given.sock") == "/given.sock"
    monkeypatch.setenv("INITD_SOCKET", "/from-env.sock")
    assert client.socket_path() == "/from-env.sock"
    assert client.new_key() != client.new_key()
