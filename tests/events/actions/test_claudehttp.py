"""Claude Code's ``type: http`` hook (initd/events/actions/claudehttp.py): the hook's input
POSTed as JSON, its headers with only the allowed variables filled in (never a header line
of their own), and the answer read as the reference reads it; a 2xx body initd cannot
read is that hook's error, which blocks (invariant 12)."""

from __future__ import annotations

import json
import socket

import pytest

from initd.events.actions import Status
from initd.events.actions.claudehttp import headers, send
from initd.events.model import HttpHook
from tests.support.calls import call
from tests.support.receiver import receiving


def test_only_the_allowed_variables_fill_a_header() -> None:
    spec = HttpHook("http://h", {"Authorization": "Bearer $TOKEN", "X": "${HOME}-$TOKEN",
                                 "Y": "$NOPE"}, ("TOKEN", "NOPE"))
    assert headers(spec, {"TOKEN": "t", "HOME": "/root"}) == {
        "Authorization": "Bearer t", "X": "-t", "Y": ""}


def test_a_variable_never_adds_a_header_line() -> None:
    spec = HttpHook("http://h", {"Authorization": "Bearer $TOKEN"}, ("TOKEN",))
    assert headers(spec, {"TOKEN": "t\r\nX-Evil: 1\0"}) == {
        "Authorization": "Bearer tX-Evil: 1"}


@pytest.mark.parametrize(("code", "body", "status", "closed"), [
    (200, b"", Status.OK, False),
    (200, b'{"decision": "block", "reason": "no"}', Status.OK, False),
    (204, b"", Status.OK, False),
    (500, b"oops", Status.FAILED, False),  # a non-blocking error
    (200, b"plain text", Status.ERROR, True),  # no answer initd can read: fails closed
])
def test_what_comes_back(code: int, body: bytes, status: Status, closed: bool) -> None:
    with receiving() as server:
        server.answers.append((code, body))
        result = send(call(stdin={"hook_event_name": "PreToolUse"}, env={"T": "x"}),
                      HttpHook(f"{server.url}/hook?q=1", {"A": "$T"}, ("T",)))
        [request] = server.requests
    assert (result.status, result.fails_closed) == (status, closed), result
    assert request["method"] == "POST" and request["path"] == "/hook?q=1"
    assert json.loads(request["body"]) == {"hook_event_name": "PreToolUse"}
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["headers"]["A"] == "x"
    if code == 200 and body.startswith(b"{"):
        assert json.loads(result.stdout) == json.loads(body)


def test_no_connection_is_a_non_blocking_error() -> None:
    with socket.socket() as held:  # a port no one listens on (bound, never listening)
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        result = send(call(), HttpHook(f"http://127.0.0.1:{port}/", {}, ()))
    assert result.status == Status.ERROR and not result.fails_closed
    assert result.error is not None and "could not POST" in result.error
