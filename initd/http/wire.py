"""HTTP/1.0 as the control API speaks it, one request per connection: a request's bytes
as they come until it is whole (Arriving), its head parsed, its WSGI environ made, the
app run and its answer written, then the connection closed. No sockets read and no
threads here: which connection is read when, and which thread answers, are the
server's (server.py)."""

from __future__ import annotations

import io
import json
import re
import socket
import sys
from collections.abc import Callable, Iterable
from typing import Any

from initd.http.spool import SPOOL_AT, Body, Spool

REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 409: "Conflict", 413: "Content Too Large",
           422: "Unprocessable Content", 431: "Request Header Fields Too Large",
           500: "Internal Server Error", 501: "Not Implemented", 503: "Service Unavailable"}

Head = tuple[str, str, str, dict[str, str], int]  # parse_head's
MAX_HEAD = 16 * 1024  # request line and headers (the API's are a few hundred bytes)
BUFFERED = 8 * 1024  # an answer sent at once (no wait) larger than this gets a send
# buffer of its size: a new connection's may be 16 KiB (tcp_wmem), and the send would
# stop half-way; queued in the kernel, the client's window need not take it now
MAX_FIELDS = 100  # header lines (curl sends 3, a kubelet 4)
MAX_LENGTH_DIGITS = 18  # Content-Length: below 10**18 is an int of 8 bytes; int() of
# 5,000 digits raised (CPython's 4,300-digit limit) and killed the reading thread
SINGLE = ("content-length", "transfer-encoding", "host")  # twice: a smuggling attempt
METHOD = re.compile(r"[A-Za-z]{1,16}")  # (str.isalpha() alone passes "é")
TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # a header's name (RFC 9110)
TARGET = re.compile(r"/[\x21-\x7e]*")  # origin-form: visible ASCII, from a /
CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # in a header value (HTAB may be)
CONTROL_IN_PATH = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # once %-decoded


class Refused(Exception):
    """A request answered with ``status`` and the message, never given to the app."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def parse_head(raw: bytes) -> Head:
    """(method, path, query, headers in lower case, Content-Length or 0 if none), or
    Refused. Total: whatever the bytes (anyone on the network sends them to root's probe
    port), a Head or Refused, never another exception, and in time linear in their size.
    The messages name what is wrong, never the data."""
    if len(raw) > MAX_HEAD:
        raise Refused(431, f"request line and headers over {MAX_HEAD} bytes")
    text = raw.decode("latin-1")  # (any byte is a latin-1 character: PEP 3333's choice)
    line, _, rest = text.partition("\r\n")
    method, target = _request_line(line)
    path, _, query = target.partition("?")
    if "%" in path:  # (what unquote changes; urllib only then, never at boot)
        from urllib.parse import unquote

        path = unquote(path)  # (errors="replace": total)
    if CONTROL_IN_PATH.search(path):
        raise Refused(400, "a control character in the path")
    headers = _fields(rest)
    if "transfer-encoding" in headers:  # chunked bodies are not spoken here
        raise Refused(501, "Transfer-Encoding is not supported: send Content-Length")
    return method, path, query, headers, _length(headers.get("content-length"))


def _request_line(line: str) -> tuple[str, str]:
    """``METHOD /target HTTP/1.x``: the method and the target."""
    parts = line.split(" ")
    if len(parts) != 3 or parts[2] not in ("HTTP/1.0", "HTTP/1.1"):
        raise Refused(400, "not an HTTP/1.x request line")
    method, target, _ = parts
    if not METHOD.fullmatch(method):
        raise Refused(400, "not an HTTP method")
    if not TARGET.fullmatch(target):
        raise Refused(400, "the request target is not a path of visible ASCII")
    return method, target


def _fields(rest: str) -> dict[str, str]:
    """Header lines as {name in lower case: value}; a name seen twice has its values
    joined by ", " (RFC 9110 5.3), except the ones a request may carry once."""
    headers: dict[str, str] = {}
    lines = rest.split("\r\n") if rest else []
    if len(lines) > MAX_FIELDS:
        raise Refused(431, f"over {MAX_FIELDS} header lines")
    for field in lines:
        name, colon, value = field.partition(":")
        if not colon or not TOKEN.fullmatch(name):  # (a space before the colon, a fold)
            raise Refused(400, "a header line is not 'Name: value'")
        value = value.strip(" \t")
        if CONTROL.search(value):  # a bare CR or LF among them: a smuggled line
            raise Refused(400, "a control character in a header value")
        key = name.lower()
        if key not in headers:
            headers[key] = value
        elif key in SINGLE:
            raise Refused(400, f"more than one {key} header")
        else:
            headers[key] += ", " + value
    return headers


def _length(text: str | None) -> int:
    """Content-Length: ASCII digits, a few of them ("²".isdigit() is True, and int() of
    it raised in the reading thread)."""
    if text is None:
        return 0
    if not 0 < len(text) <= MAX_LENGTH_DIGITS or not text.isascii() or not text.isdigit():
        raise Refused(400, "Content-Length is not a number of bytes")
    return int(text)


class Arriving:
    """One request as its bytes come (the server adds each read to ``data``): whole once
    its head and as much body as its Content-Length says are in."""

    __slots__ = ("body", "data", "head", "scanned", "skipped")

    def __init__(self) -> None:
        self.data = bytearray()
        self.head: Head | None = None  # once parsed (its bytes then leave ``data``)
        self.scanned = 0  # bytes known to hold no end of the head: a slowloris's every
        # byte would otherwise search again all that it sent before
        self.skipped = 0  # bytes of a body over max_body read and dropped
        self.body: Body | None = None  # a body past SPOOL_AT, in its file as it comes
        # (the arriving request's until it is whole: its owner closes it if it never is)

    def whole(self, max_body: int, spool: Spool | None = None
              ) -> tuple[Head, bytes | Body] | None:
        """The head and the body once they are there; None while more is to come;
        Refused. A body over ``max_body`` is read to its end and dropped as it comes (the
        app gets none of it, and refuses it by its Content-Length): answered before it was
        all read, the client still sending would have the connection reset, and lose the
        answer (an agent's harness read that as a guard's "go ahead"). With a ``spool``,
        a body past SPOOL_AT goes to its file as it comes (memory holds none of it); one
        the spool could not keep is read to its end too, then refused with a 503."""
        if self.head is None:
            end = self.data.find(b"\r\n\r\n", self.scanned)
            if end < 0:
                if len(self.data) > MAX_HEAD:
                    raise Refused(431, f"request line and headers over {MAX_HEAD} bytes")
                self.scanned = max(0, len(self.data) - 3)
                return None
            self.head = parse_head(bytes(self.data[:end]))
            del self.data[: end + 4]
        length = self.head[4]
        if length > max_body:  # dropped as it comes: memory holds none of it
            self.skipped += len(self.data)
            del self.data[:]
            return None if self.skipped < length else (self.head, b"")
        if spool is not None and length > SPOOL_AT:
            return self._spooled(spool, length)
        if len(self.data) < length:
            return None  # the body is still coming
        return self.head, bytes(memoryview(self.data)[:length])

    def _spooled(self, spool: Spool, length: int) -> tuple[Head, Body] | None:
        if self.body is None:
            self.body = spool.take(length)
        self.body.add(self.data)
        del self.data[:]
        if not self.body.whole:
            return None
        body, self.body = self.body, None
        if body.why is not None:
            body.close()
            raise Refused(503, body.why)
        assert self.head is not None
        return self.head, body


def wsgi_environ(base: dict[str, Any], head: Head, body: bytes | Body) -> dict[str, Any]:
    """The WSGI environ of a whole request: ``base`` (the server's), its head, its body
    (in memory, or in its file: ``wsgi.input`` is then the spool's Body, closed once the
    request is answered: ``let_go``)."""
    method, path, query, headers, _ = head
    made = {**base, "REQUEST_METHOD": method, "PATH_INFO": path,
            "QUERY_STRING": query, "CONTENT_TYPE": headers.get("content-type", ""),
            "CONTENT_LENGTH": headers.get("content-length", ""),
            "wsgi.input": body if isinstance(body, Body) else io.BytesIO(body),
            "wsgi.errors": sys.stderr}
    for name, value in headers.items():
        key = "HTTP_" + name.upper().replace("-", "_")
        if key not in ("HTTP_CONTENT_TYPE", "HTTP_CONTENT_LENGTH"):
            made[key] = value
    return made


def let_go(environ: dict[str, Any]) -> None:
    """What the request's body held is free: its file closed (a spooled one), its bytes
    dropped. Once the app has answered; again does nothing."""
    body = environ.pop("wsgi.input", None)
    if isinstance(body, Body):
        body.close()


def respond(conn: socket.socket, app: Callable[..., Iterable[bytes]],
            environ: dict[str, Any], timeout: float,
            answered: Callable[[], object] = lambda: None) -> None:
    """Run the app and send its answer; the connection is closed after (HTTP/1.0).
    ``answered`` is called once the app has answered, before the answer is sent: what
    the request held is free then, whether the client takes its answer at once or not."""
    answer: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]],
                       exc_info: object = None) -> Callable[[bytes], object]:
        answer[:] = [status, headers]
        return lambda data: None

    try:
        body = b"".join(app(environ, start_response))
        status, headers = answer
    except Exception as err:  # the app answers its own errors; this is a bug of ours
        answered()
        answer_json(conn, 500, {"error": f"internal error: {err!r}"}, timeout)
        return
    answered()
    send(conn, status, headers, body, timeout)


def answer_json(conn: socket.socket, status: int, body: dict[str, Any],
                timeout: float) -> None:
    """The server's own answer (a refusal, a 503), without the app."""
    payload = json.dumps(body).encode()
    send(conn, f"{status} {REASONS[status]}", [
        ("Content-Type", "application/json"), ("Content-Length", str(len(payload)))],
        payload, timeout)


def send(conn: socket.socket, status: str, headers: list[tuple[str, str]], body: bytes,
         timeout: float) -> None:
    """The whole answer, within ``timeout`` seconds; then the connection is closed."""
    head = "".join(f"{k}: {v}\r\n" for k, v in headers)
    message = f"HTTP/1.0 {status}\r\n{head}Connection: close\r\n\r\n".encode("latin-1") + body
    try:
        if conn.gettimeout() != timeout:  # (the reading thread's are non-blocking already)
            conn.settimeout(timeout)
        if not timeout and len(message) > BUFFERED:  # sent at once or never: room for it
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, len(message))  # (/metrics)
        conn.sendall(message)
    except OSError:
        pass  # gone, or not reading its answer: nobody to tell
    finally:
        conn.close()
