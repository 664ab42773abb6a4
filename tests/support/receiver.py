"""A real HTTP server on 127.0.0.1 (a port of its own) that records every request and
answers as told, for the tests of what initd sends (webhooks, Claude Code's http hooks)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Receiver:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answers: list[tuple[int, bytes]] = []  # answered in turn; then (200, b"")
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                receiver.requests.append({"method": self.command, "path": self.path,
                                          "headers": dict(self.headers),
                                          "body": self.rfile.read(length)})
                code, body = receiver.answers.pop(0) if receiver.answers else (200, b"")
                self.send_response(code)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = _any

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.socket.settimeout(1.0)  # (an accept never waits for good: see
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"  # test_actions.py)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def receiving() -> Iterator[Receiver]:
    made = Receiver()
    try:
        yield made
    finally:
        made.close()
