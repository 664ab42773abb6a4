"""The request head's parser is total and bounded (invariant 13): whatever the bytes, a
Head or Refused, never another exception (``Content-Length: ²`` once raised ValueError
in the thread that reads every request, and root's probe port never answered again).
Tables for what is refused and why, properties for everything else; and the server
around it, which loses a connection, never its thread, to a failure."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from initd.http import server as httpd
from initd.http.wire import MAX_HEAD, REASONS, Arriving, Refused, parse_head
from tests.support.harness import wait_for
from tests.support.probes import get, send_raw

GET = b"GET /healthz HTTP/1.1\r\nHost: probe"


@pytest.mark.parametrize(("raw", "head"), [
    (GET, ("GET", "/healthz", "", {"host": "probe"}, 0)),
    (b"POST /v1/turn?x=1&y HTTP/1.0\r\nContent-Length: 0042\r\nX-A: 1\r\nx-a: 2",
     ("POST", "/v1/turn", "x=1&y", {"content-length": "0042", "x-a": "1, 2"}, 42)),
    (b"GET /v1/hooks/a%2Db HTTP/1.1\r\nX:\t spaced \t", ("GET", "/v1/hooks/a-b", "",
                                                          {"x": "spaced"}, 0)),
    (b"GET /caf%C3%A9 HTTP/1.1\r\nX: caf\xe9", ("GET", "/caf\xe9", "", {"x": "caf\xe9"}, 0)),
    (b"GET / HTTP/1.1\r\nContent-Length: " + b"9" * 18, ("GET", "/", "",
                                                         {"content-length": "9" * 18},
                                                         10**18 - 1)),
])
def test_a_head_is_parsed(raw: bytes, head: tuple[Any, ...]) -> None:
    assert parse_head(raw) == head


@pytest.mark.parametrize(("raw", "status"), [
    (GET + b"\r\nContent-Length: \xb2", 400),  # "²".isdigit() is True: int() raised
    (GET + b"\r\nContent-Length: \xb9\xb3", 400),
    (GET + b"\r\nContent-Length: " + b"1" * 5000, 400),  # int() refuses 4,300+ digits
    (GET + b"\r\nContent-Length: " + b"1" * 19, 400),
    (GET + b"\r\nContent-Length: ", 400),
    (GET + b"\r\nContent-Length: -1", 400),
    (GET + b"\r\nContent-Length: 1_000", 400),  # int() takes underscores
    (GET + b"\r\nContent-Length: 1 000", 400),
    (GET + b"\r\nContent-Length: 3\r\nContent-Length: 3", 400),
    (GET + b"\r\nHost: other", 400),
    (GET + b"\r\nTransfer-Encoding: chunked", 501),
    (GET + b"\r\nX-A : 1", 400),
    (GET + b"\r\n X-A: 1", 400),
    (GET + b"\r\nX(A): 1", 400),
    (GET + b"\r\n: 1", 400),
    (GET + b"\r\nX-A", 400),
    (GET + b"\r\n", 400),  # an empty line in the head
    (GET + b"\r\nX-A: 1\x00", 400),
    (GET + b"\r\nX-A: 1\nX-B: 2", 400),
    (GET + b"\r\nX-A: \x7f", 400),
    (GET + b"\r\n" + b"X: y\r\n" * 100 + b"X: y", 431),
    (GET + b"\r\nX: " + b"y" * MAX_HEAD, 431),
    (b"GET /healthz HTTP/1.1 ", 400),
    (b"GET  /healthz HTTP/1.1", 400),
    (b"GET /healthz", 400),
    (b"GET /healthz HTTP/2.0", 400),
    (b"GET /healthz HTTP/1.10", 400),
    (b"G\xc9T /healthz HTTP/1.1", 400),  # "GÉT".isalpha() is True
    (b"G-T /healthz HTTP/1.1", 400),
    (b"GETGETGETGETGETGET / HTTP/1.1", 400),
    (b"GET healthz HTTP/1.1", 400),
    (b"GET * HTTP/1.1", 400),
    (b"GET http://x/healthz HTTP/1.1", 400),
    (b"GET /h\xe9 HTTP/1.1", 400),
    (b"GET /h\x7f HTTP/1.1", 400),
    (b"GET /h%00 HTTP/1.1", 400),
    (b"GET /h%0a HTTP/1.1", 400),
    (b"GET /h%C2%85 HTTP/1.1", 400),  # NEL, once decoded
    (b"", 400),
    (b"\x16\x03\x01\x02\x00", 400),
])
def test_a_malformed_head_is_refused(raw: bytes, status: int) -> None:
    with pytest.raises(Refused) as refused:
        parse_head(raw)
    assert refused.value.status == status
    assert refused.value.status in REASONS


def check(raw: bytes) -> None:
    """parse_head's contract: a Head whose parts hold what the server relies on, or
    Refused with a status it can answer."""
    try:
        method, path, query, headers, length = parse_head(raw)
    except Refused as refused:
        assert refused.status in REASONS
        return
    assert method.isascii() and method.isalpha() and 1 <= len(method) <= 16
    assert path.startswith("/") and all(ch >= " " and not "\x7f" <= ch <= "\x9f"
                                        for ch in path)
    assert isinstance(query, str)
    assert all(name == name.lower() and name.isascii() and name for name in headers)
    assert all("\n" not in value and "\r" not in value for value in headers.values())
    assert isinstance(length, int) and 0 <= length < 10**18


FIELD_NAMES = st.sampled_from([b"Content-Length", b"content-length", b"Transfer-Encoding",
                               b"Host", b"X", b"X-A"]) | st.binary(max_size=12)
FIELD_VALUES = (st.binary(max_size=24) | st.from_regex(rb"\A[0-9]{0,25}\Z")
                | st.text(max_size=8).map(lambda t: t.encode("utf-8"))
                | st.sampled_from([b"\xb2", b"\xb9", "١٢".encode(), b"+1", b"-0", b"0x1"]))
HEADS = st.builds(
    lambda method, target, version, fields: b" ".join([method, target, version])
    + b"".join(b"\r\n" + name + sep + value for name, sep, value in fields),
    st.sampled_from([b"GET", b"POST", b"get", b"G\xc9T", b""]) | st.binary(max_size=8),
    st.sampled_from([b"/", b"/healthz?x=%00", b"/%zz", b"*"]) | st.binary(max_size=16),
    st.sampled_from([b"HTTP/1.0", b"HTTP/1.1", b"HTTP/1.x", b"http/1.1"]),
    st.lists(st.tuples(FIELD_NAMES, st.sampled_from([b": ", b":", b" : ", b"\t:"]),
                       FIELD_VALUES), max_size=6))


@given(st.binary(max_size=4096))
@example(GET + b"\r\nContent-Length: \xb2")
@example(GET + b"\r\nContent-Length: " + b"7" * 5000)
def test_any_bytes_are_a_head_or_refused(raw: bytes) -> None:
    check(raw)


@given(HEADS)
def test_any_near_http_head_is_a_head_or_refused(raw: bytes) -> None:
    check(raw)


def whole_of(chunks: list[bytes], max_body: int = 64) -> object:
    """What Arriving makes of ``chunks`` fed one by one: (head, body), None (more to
    come) or the refusal's status."""
    arriving = Arriving()
    try:
        for chunk in chunks:
            arriving.data += chunk
            got = arriving.whole(max_body)
            if got is not None:
                return got
        return None
    except Refused as refused:
        return refused.status


@given(st.one_of(HEADS.map(lambda h: h + b"\r\n\r\n"), st.binary(max_size=64))
       .flatmap(lambda head: st.tuples(st.just(head), st.binary(max_size=80))),
       st.lists(st.integers(min_value=0, max_value=200), max_size=8))
@example((b"POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\n", b"hello world"), [1, 30, 33])
@example((b"GET / HTTP/1.0\r\nX: y\r", b"\n\r\nrest"), [len(b"GET / HTTP/1.0\r\nX: y\r")])
def test_a_request_is_the_same_whatever_its_reads(request_parts: tuple[bytes, bytes],
                                                  cuts: list[int]) -> None:
    """Fed in any pieces (a slowloris's bytes one by one, or all at once), a request is
    the same: the end of its head is found wherever a read splits it."""
    data = b"".join(request_parts)
    edges = sorted({min(cut, len(data)) for cut in cuts})
    chunks = [data[a:b] for a, b in zip([0, *edges], [*edges, len(data)], strict=True)]
    assert whole_of(chunks) == whole_of([data])


# --- the server around the parser: a failure costs a connection, never the thread


class Faulty(httpd.UnixWSGIServer):
    """A server with a bug of ours for one path: what the guard is for."""

    def _request(self, waiting: httpd._Waiting) -> dict[str, Any] | None:
        environ = super()._request(waiting)
        if environ is not None and environ["PATH_INFO"] == "/bug":
            raise RuntimeError("a bug of ours\nforged: line")
        return environ


def hello(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Length", "2")])
    return [b"{}"]


@pytest.fixture
def faulty(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, Faulty]]:
    monkeypatch.setattr(httpd, "SAY_EVERY", 3600.0)  # (however slow this machine is)
    listener = socket.create_server(("127.0.0.1", 0))
    server = Faulty(listener, hello, frozenset(("/healthz",)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield listener.getsockname()[1], server
    server.shutdown()
    server.server_close()


def test_a_failure_costs_its_connection_and_one_line_not_the_thread(faulty, capfd) -> None:  # type: ignore[no-untyped-def]
    port, _ = faulty
    for _ in range(20):
        assert send_raw(port, b"GET /bug HTTP/1.1\r\n\r\n") == b""  # dropped, no answer
    assert get(port)[0] == 200
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if "a connection failed" in line]
    assert lines == ["initd service: a connection failed: dropped: RuntimeError: "
                     "'a bug of ours\\nforged: line' (said at most every 3600 s)"], err


def test_the_probes_cap_drops_the_oldest_and_a_probe_gets_through(  # type: ignore[no-untyped-def]
        faulty, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe port hands over a connection once it has sent something (health.DEFER),
    so a probe's request is all there when it is accepted: it is answered then and there,
    and costs no one their place. One that must wait makes room: the oldest goes."""
    port, server = faulty
    server.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 10)
    server.max_waiting = 4  # (the probe port's: health.MAX_WAITING)
    monkeypatch.setattr(httpd, "READ_TIMEOUT", 3600.0)  # dropped for the cap, not its time
    held = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(5)]
    for conn in held[:4]:
        conn.sendall(GET)  # a head that never ends
    wait_for(lambda: len(server._waiting) == 4, what="four held")
    assert get(port)[0] == 200  # answered as it came: no one dropped
    held[0].setblocking(False)
    with pytest.raises(BlockingIOError):
        held[0].recv(10)  # (still open, nothing to read)
    held[0].settimeout(30)
    held[4].sendall(GET)  # a fifth that must wait: the oldest makes room
    assert held[0].recv(10) == b""
    wait_for(lambda: len(server._waiting) == 4, what="the fifth held, four in all")
    for conn in held:
        conn.close()
