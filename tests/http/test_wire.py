"""The request head's parser (initd/http/wire.py) is total and bounded (invariant 13):
whatever the bytes, a Head or Refused, never another exception (``Content-Length: ²``
once raised ValueError in the thread that reads every request, and root's probe port
never answered again). Tables for what is refused and why, properties for everything
else. The server around it is test_server.py's."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from initd.http.wire import MAX_HEAD, REASONS, Arriving, Refused, parse_head

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


def test_an_answer_sent_at_once_goes_whole_even_past_a_small_send_buffer() -> None:
    """/metrics is answered by the probes' reading thread, which never waits (timeout 0):
    a body past a new connection's send buffer is queued whole, never cut."""
    import socket
    import threading

    from initd.http import wire

    body = b"m" * (1 << 20)
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    conn, _ = server.accept()
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)  # as small as it may be
    conn.setblocking(False)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(b"".join(iter(
        lambda: client.recv(65536), b""))))
    wire.send(conn, "200 OK", [("Content-Length", str(len(body)))], body, 0)
    reader.start()  # (read only after the send returned: nothing waited for the client)
    reader.join(30)
    assert got[0].endswith(b"\r\n\r\n" + body)
    client.close()
    server.close()
