"""A stand-in for the hook service on a Unix socket, in a thread: each request (its raw
bytes) answered as the test says, for the tests of the verbs that ask it (and of their
client), where a real service would hide what the verb itself does with an answer."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

Answer = Callable[[bytes], bytes | None]  # a request -> the raw answer (None: hang up)


def http(status: str, body: bytes, length: int | None = None) -> bytes:
    """An HTTP/1.0 answer as initd's server writes one."""
    size = len(body) if length is None else length
    return f"HTTP/1.0 {status}\r\nContent-Length: {size}\r\n\r\n".encode() + body


def json_answer(code: int, body: Any) -> bytes:
    reasons = {200: "OK", 400: "Bad Request", 403: "Forbidden", 409: "Conflict",
               422: "Unprocessable Content", 500: "Internal Server Error",
               503: "Service Unavailable"}
    return http(f"{code} {reasons[code]}", json.dumps(body).encode())


@contextmanager
def serving(path: str, answer: Answer) -> Iterator[list[bytes]]:
    """Serve at ``path`` until the block ends; yields the requests seen (in order)."""
    seen: list[bytes] = []
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(8)

    def loop() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                request = conn.recv(1 << 20)
                seen.append(request)
                raw = answer(request)
                if raw is not None:
                    conn.sendall(raw)
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        # (a close alone leaves the thread in accept() for good: a shutdown wakes it)
        try:
            listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        thread.join(timeout=30)
        listener.close()
