"""The workers behind the server's reading thread (initd/http/workers.py): a request
answered by a worker, the bodies over the small size counted against MAX_HELD while they
wait or are at work and let go once answered, and no room a refusal, never a hold."""

from __future__ import annotations

import io
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from initd.http import workers
from initd.http.workers import Workers

SMALL = 16


def environ(body: bytes) -> dict[str, Any]:
    return {"REQUEST_METHOD": "POST", "PATH_INFO": "/", "wsgi.input": io.BytesIO(body)}


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair()
    yield ours, theirs
    ours.close()
    theirs.close()


def test_a_request_is_answered_by_a_worker(pair: tuple[socket.socket, socket.socket]
                                           ) -> None:
    def app(env: dict[str, Any], start: Any) -> list[bytes]:
        start("200 OK", [("Content-Length", "5")])
        return [env["wsgi.input"].getvalue()[:5]]

    said: list[str] = []
    pool = Workers(app, lambda what, err: said.append(what), SMALL)
    ours, theirs = pair
    assert pool.give(ours, environ(b"hello")) is None
    answer = theirs.makefile("rb").read()
    assert answer.startswith(b"HTTP/1.0 200 OK") and answer.endswith(b"hello")
    pool.close()
    assert said == [] and pool.held == 0


def test_large_bodies_count_until_answered(pair: tuple[socket.socket, socket.socket],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "MAX_HELD", 100)
    release = threading.Event()

    def app(env: dict[str, Any], start: Any) -> list[bytes]:
        release.wait(60)
        start("200 OK", [("Content-Length", "0")])
        return []

    pool = Workers(app, lambda what, err: None, SMALL)
    ours, theirs = pair
    assert pool.give(ours, environ(b"x" * 60)) is None
    assert pool.held == 60
    more = socket.socketpair()
    try:
        assert pool.give(more[0], environ(b"y" * 60)) == \
            "too many large requests at once; try again"  # no room: refused, not held
        assert pool.give(more[0], environ(b"small")) is None  # small ones: by count only
        release.set()
        theirs.makefile("rb").read()
        more[1].makefile("rb").read()
    finally:
        more[1].close()
    pool.close()
    assert pool.held == 0  # let go once answered


def test_a_full_queue_is_refused(pair: tuple[socket.socket, socket.socket],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "MAX_QUEUED", 0)
    pool = Workers(lambda env, start: [], lambda what, err: None, SMALL)
    assert pool.give(pair[0], environ(b"")) == "too many requests at once; try again"


def test_an_apps_failure_is_a_500_and_the_worker_goes_on(
        pair: tuple[socket.socket, socket.socket]) -> None:
    said: list[str] = []
    pool = Workers(lambda env, start: [], lambda what, err: said.append(what), SMALL)
    ours, theirs = pair  # (the app never calls start: a bug of its own)
    assert pool.give(ours, environ(b"")) is None
    assert b" 500 " in theirs.makefile("rb").read().split(b"\r\n", 1)[0]
    again = socket.socketpair()
    try:
        assert pool.give(again[0], environ(b"")) is None  # the same worker answers
        assert b" 500 " in again[1].makefile("rb").read()
    finally:
        again[1].close()
    pool.close()
    assert said == [] and pool.held == 0
