"""HTTP/1.0 as the control API speaks it, one request per connection: a request's head
parsed, its WSGI environ made, the app run and its answer written, then the connection
closed. No buffering and no threads here: when a request is whole, and which thread
answers it, is the server's (httpd)."""

from __future__ import annotations

import io
import json
import socket
import sys
from collections.abc import Callable, Iterable
from typing import Any

REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           409: "Conflict", 413: "Content Too Large", 422: "Unprocessable Content",
           431: "Request Header Fields Too Large", 500: "Internal Server Error",
           503: "Service Unavailable"}

Head = tuple[str, str, str, dict[str, str], int]  # parse_head's


class Refused(Exception):
    """A request answered with ``status`` and the message, never given to the app."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def parse_head(raw: bytes) -> Head:
    """(method, path, query, headers in lower case, Content-Length or -1 if none/bad)."""
    try:
        text = raw.decode("latin-1")
    except UnicodeDecodeError:  # (latin-1 decodes any byte)
        raise Refused(400, "not an HTTP request") from None
    line, _, rest = text.partition("\r\n")
    parts = line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[0].isalpha():
        raise Refused(400, "not an HTTP/1.x request line")
    method, target = parts[0], parts[1]
    path, _, query = target.partition("?")
    headers: dict[str, str] = {}
    for field in rest.split("\r\n") if rest else ():
        name, colon, value = field.partition(":")
        if not colon or not name or name != name.strip():
            raise Refused(400, "a header line is not 'Name: value'")
        headers[name.lower()] = value.strip()
    length_text = headers.get("content-length", "")
    length = int(length_text) if length_text.isdigit() else (0 if not length_text else -1)
    from urllib.parse import unquote  # (only once a request comes: not at every boot)

    return method, unquote(path), query, headers, length


def wsgi_environ(base: dict[str, Any], head: Head, body: bytes) -> dict[str, Any]:
    """The WSGI environ of a whole request: ``base`` (the server's), its head, its body."""
    method, path, query, headers, _ = head
    made = {**base, "REQUEST_METHOD": method, "PATH_INFO": path,
            "QUERY_STRING": query, "CONTENT_TYPE": headers.get("content-type", ""),
            "CONTENT_LENGTH": headers.get("content-length", ""),
            "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr}
    for name, value in headers.items():
        key = "HTTP_" + name.upper().replace("-", "_")
        if key not in ("HTTP_CONTENT_TYPE", "HTTP_CONTENT_LENGTH"):
            made[key] = value
    return made


def respond(conn: socket.socket, app: Callable[..., Iterable[bytes]],
            environ: dict[str, Any], timeout: float) -> None:
    """Run the app and send its answer; the connection is closed after (HTTP/1.0)."""
    answer: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]],
                       exc_info: object = None) -> Callable[[bytes], object]:
        answer[:] = [status, headers]
        return lambda data: None

    try:
        body = b"".join(app(environ, start_response))
        status, headers = answer
    except Exception as err:  # the app answers its own errors; this is a bug of ours
        answer_json(conn, 500, {"error": f"internal error: {err!r}"}, timeout)
        return
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
    try:
        conn.settimeout(timeout)
        conn.sendall(f"HTTP/1.0 {status}\r\n{head}Connection: close\r\n\r\n"
                     .encode("latin-1") + body)
    except OSError:
        pass  # gone, or not reading its answer: nobody to tell
    finally:
        conn.close()
