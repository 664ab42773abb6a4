"""``webhook`` (initd/events/actions/webhook.py): where initd sends (https, or plain http
to this machine only, never a URL's token in a message), sends retried while they fail,
and the one-shot callback: a random token, compared in constant time, good once. The
engine's webhooks, end to end: tests/events/test_actions.py."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from initd.events.actions import Status
from initd.events.actions.webhook import Callback, _parse, check_url, send
from initd.events.model import Webhook
from tests.support.calls import call
from tests.support.receiver import receiving


@pytest.mark.parametrize(("url", "refused"), [
    ("https://hooks.slack.com/services/T/B/secret", None),
    ("http://127.0.0.1:8080/x", None), ("http://localhost/x", None), ("http://[::1]/", None),
    ("http://example.com/services/secret", "plain http:// only for localhost"),
    ("ftp://example.com/x", "expected an https:// URL"), ("https:///x", "expected an https"),
    ("file:///etc/passwd", "expected an https:// URL"),
])
def test_where_initd_sends(url: str, refused: str | None) -> None:
    said = check_url(url)
    assert (said is None) if refused is None else (refused in str(said))
    assert "secret" not in str(said)  # a URL's path and query often hold a token


def hook(url: str, **fields: object) -> tuple[Webhook, dict[str, object]]:
    return Webhook(url, "POST", {"X-Said": "{{tool_name}}"}, {"tool": "{{tool_name}}"}, 0,
                   "continue"), {"wait": False, "retry_delay": 0.0, **fields}


def test_a_send_with_its_values_escaped_as_json() -> None:
    with receiving() as server:
        spec, fields = hook(f"{server.url}/in")
        result = send(call(spec, hook_fields=fields, payload={"tool_name": 'a"b $(x)'}), spec)
        [request] = server.requests
    assert result.status == Status.OK
    assert json.loads(request["body"]) == {"tool": 'a"b $(x)'}
    assert request["headers"]["X-Said"] == 'a"b $(x)'


def test_a_value_never_adds_a_header_line() -> None:
    with receiving() as server:
        spec, fields = hook(f"{server.url}/in")
        result = send(call(spec, hook_fields=fields,
                           payload={"tool_name": "x\r\nX-Forged: 1"}), spec)
        assert server.requests == []  # refused before it is sent
    assert result.status == Status.ERROR


def test_a_failed_send_is_retried_then_an_error() -> None:
    with receiving() as server:
        server.answers += [(503, b""), (502, b""), (200, b"ok")]
        spec, fields = hook(f"{server.url}/in", retries=2)
        assert send(call(spec, hook_fields=fields), spec).status == Status.OK
        assert len(server.requests) == 3
        server.answers += [(500, b"")] * 2
        spec, fields = hook(f"{server.url}/in", retries=1)
        result = send(call(spec, hook_fields=fields), spec)
    assert result.status == Status.ERROR and "after 2 attempt(s): HTTP 500" in str(result.error)
    assert "/in" not in str(result.error)  # the path: not said


def test_a_4xx_is_the_answer_not_retried() -> None:
    with receiving() as server:
        server.answers.append((404, b"no"))
        spec, fields = hook(f"{server.url}/in", retries=3)
        result = send(call(spec, hook_fields=fields), spec)
        assert len(server.requests) == 1
    assert result.status == Status.FAILED and "HTTP 404" in str(result.error)


def answer(url: str, body: bytes = b"") -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body or None),
                                    timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


def test_a_callback_takes_its_token_once() -> None:
    callback = Callback(0)
    try:
        base = callback.url.rsplit("/", 1)[0]
        assert answer(f"{base}/wrong-token") == 403
        assert answer(f"{base.rsplit('/', 1)[0]}/elsewhere") == 404
        assert answer(f"{callback.url}?action=approve", b'{"by": "me"}') == 200
        assert answer(f"{callback.url}?action=deny") == 403  # replayed: refused
        assert callback.wait(30, None) == {"by": "me", "action": "approve"}
    finally:
        callback.close()


def test_a_callback_waits_no_longer_than_told_or_a_stop() -> None:
    callback = Callback(0)
    try:
        cancel = threading.Event()
        cancel.set()
        assert callback.wait(3600, cancel) is None
        assert callback.wait(0.0, None) is None
    finally:
        callback.close()


@pytest.mark.parametrize(("body", "parsed"), [
    (b"", {}), (b'{"a": 1}', {"a": 1}), (b"[1]", {"body": [1]}), (b"a=1&b=2", {"a": "1",
                                                                              "b": "2"}),
    (b"plain", {"body": "plain"}), (b"[" * 100_000, {"body": "[" * 100_000}),
    (b"\xff", {"body": "\ufffd"}),
])
def test_what_a_callback_said(body: bytes, parsed: dict[str, object]) -> None:
    assert _parse(body) == parsed
