"""The control API's server: HTTP/1.0 for a WSGI app on a listening socket.

One thread reads every request, answers probes and a cancel itself, and gives the rest
to a few workers, so that a cancel is served while a turn's evaluation runs and no
client, however it behaves, holds a thread before its request is whole. Under initd the
root supervisor binds the socket once (httpbind) and the hook service inherits it (as
systemd's socket activation passes one): /run/initd stays root's, and a request made
while the service restarts waits in the backlog instead of being refused. What a request
and an answer look like on the wire is httpwire's.
"""

from __future__ import annotations

import os
import queue
import selectors
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from initd import httpwire
from initd.httpbind import BACKLOG as BACKLOG  # (here too: callers name httpd's)
from initd.httpbind import bind as bind
from initd.httpwire import REASONS as REASONS

MAX_WAITING = 1024  # connections still sending their request; past it, the oldest goes
MAX_QUEUED = 1024  # whole requests waiting for a worker; past it, 503 at once
WORKERS = 16  # requests at work at once (discovery, status, a turn, an event's hooks)
READ_TIMEOUT = 10.0  # seconds a client has to send its whole request
WRITE_TIMEOUT = 10.0  # ... and to take its answer
MAX_HEAD = 16 * 1024  # request line and headers (the API's are a few hundred bytes)
MAX_BUFFERED = 16 * 2**20  # of all requests still arriving; past it, the oldest goes
MAX_BODY = 64 * 1024  # (the API's bodies are small JSON objects: app.MAX_BODY)
QUICK = frozenset(("/v1/health", "/v1/ready", "/v1/turn/cancel"))  # answered at once


class _Waiting:
    """A connection still sending its request: what came so far, and its deadline."""

    __slots__ = ("data", "deadline", "head")

    def __init__(self, deadline: float) -> None:
        self.data = bytearray()
        self.deadline = deadline
        self.head: httpwire.Head | None = None  # once parsed


class UnixWSGIServer:
    """HTTP/1.0 on the listening socket, one request per connection, for a WSGI app.

    One thread (``serve_forever``) accepts connections and reads every request whole,
    without a thread per connection: an idle or slowloris client costs a buffer, not a
    thread, and has READ_TIMEOUT for its whole request. Health, readiness and a cancel
    are answered by that thread at once; every other request goes to one of WORKERS
    threads. Under 50 flooding clients a health check once waited ~35 ms in the backlog
    behind their thread starts (p99 96 ms, later 56 ms); a cancel must never wait for the
    turn it cancels."""

    def __init__(self, sock: socket.socket, app: Callable[..., Iterable[bytes]],
                 quick: frozenset[str] = QUICK) -> None:
        self.socket = sock  # already bound and listening: ours, or inherited
        self.quick = quick  # paths answered by the reading thread itself
        self.socket.setblocking(False)
        self.app = app
        self._selector = selectors.DefaultSelector()
        self._waiting: dict[socket.socket, _Waiting] = {}  # oldest first
        self._buffered = 0  # bytes held for them (MAX_BUFFERED)
        self._said_at = 0.0  # when accept's failure was last said
        self._queue: queue.SimpleQueue[tuple[socket.socket, dict[str, Any]] | None] = \
            queue.SimpleQueue()
        self._workers: list[threading.Thread] = []
        self._stop = threading.Event()
        self._stopped = threading.Event()
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.base_environ = {"SERVER_NAME": "initd", "SERVER_PORT": "0",
                             "SERVER_PROTOCOL": "HTTP/1.0", "SCRIPT_NAME": "",
                             "REMOTE_ADDR": "local", "wsgi.version": (1, 0),
                             "wsgi.url_scheme": "http", "wsgi.multithread": True,
                             "wsgi.multiprocess": False, "wsgi.run_once": False}

    # --- the accepting thread

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        self._selector.register(self.socket, selectors.EVENT_READ)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        try:
            while not self._stop.is_set():
                for key, _ in self._selector.select(min(poll_interval, 1.0)):
                    if key.fileobj is self.socket:
                        self._accept()
                    elif key.fileobj == self._wake_r:
                        continue
                    else:
                        self._read(key.fileobj)  # type: ignore[arg-type]
                self._expire()
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        """From another thread: serve_forever returns; workers end after their request."""
        self._stop.set()
        try:
            os.write(self._wake_w, b"!")
        except OSError:
            pass
        self._stopped.wait()

    def server_close(self) -> None:
        for _ in self._workers:
            self._queue.put(None)
        for conn in list(self._waiting):
            self._drop(conn)
        self._selector.close()
        self.socket.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def _accept(self) -> None:
        for _ in range(64):  # what is in the backlog now, in one go
            try:
                conn, _ = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as err:  # EMFILE, ENFILE, ENOBUFS: the oldest makes room
                if self._waiting:
                    self._drop(next(iter(self._waiting)))
                elif time.monotonic() - self._said_at > 10:  # (said, not spun on)
                    self._said_at = time.monotonic()
                    print(f"initd service: cannot accept a connection: {err}",
                          file=sys.stderr, flush=True)
                return
            if len(self._waiting) >= MAX_WAITING:  # the one sending longest makes room
                self._drop(next(iter(self._waiting)))
            conn.setblocking(False)
            self._waiting[conn] = _Waiting(time.monotonic() + READ_TIMEOUT)
            self._selector.register(conn, selectors.EVENT_READ)

    def _read(self, conn: socket.socket) -> None:
        waiting = self._waiting.get(conn)
        if waiting is None:
            return
        try:
            chunk = conn.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:  # gone before it finished its request
            self._drop(conn)
            return
        waiting.data += chunk
        self._buffered += len(chunk)
        while self._buffered > MAX_BUFFERED:  # the oldest others make room
            victim = next((other for other in self._waiting if other is not conn), None)
            if victim is None:
                break
            self._drop(victim)
        try:
            environ = self._request(waiting)
        except httpwire.Refused as refused:
            self._forget(conn)
            self._answer_now(conn, refused.status, {"error": str(refused)})
            return
        if environ is None:
            return  # more to come
        self._forget(conn)
        if environ["PATH_INFO"] in self.quick:
            self._respond(conn, environ)
            return
        if self._queue.qsize() >= MAX_QUEUED:  # (only this thread adds to it)
            self._answer_now(conn, 503, {"error": "too many requests at once; try again"})
            return
        if len(self._workers) < WORKERS and not self._start_worker() and not self._workers:
            self._answer_now(conn, 503, {"error": "no thread to answer with (a pids "
                                                  "limit?); try again"})
            return
        self._queue.put((conn, environ))

    def _request(self, waiting: _Waiting) -> dict[str, Any] | None:
        """The request's WSGI environ once it is all there; None while more is to come."""
        if waiting.head is None:
            end = waiting.data.find(b"\r\n\r\n")
            if end < 0:
                if len(waiting.data) > MAX_HEAD:
                    raise httpwire.Refused(431, f"request line and headers over {MAX_HEAD} bytes")
                return None
            waiting.head = httpwire.parse_head(bytes(waiting.data[:end]))
            del waiting.data[: end + 4]
            self._buffered -= end + 4
        length = waiting.head[4]
        if 0 <= length <= MAX_BODY and len(waiting.data) < length:
            return None  # the body is still coming (a bad length is the app's to refuse)
        body = bytes(waiting.data[: max(0, min(length, MAX_BODY))])
        return httpwire.wsgi_environ(self.base_environ, waiting.head, body)

    def _expire(self) -> None:
        now = time.monotonic()
        while self._waiting:
            conn, waiting = next(iter(self._waiting.items()))
            if waiting.deadline > now:  # oldest first: the rest are younger
                return
            self._drop(conn)

    def _forget(self, conn: socket.socket) -> None:
        waiting = self._waiting.pop(conn, None)
        if waiting is not None:
            self._buffered -= len(waiting.data)
        try:
            self._selector.unregister(conn)
        except (KeyError, ValueError):
            pass

    def _drop(self, conn: socket.socket) -> None:
        self._forget(conn)
        conn.close()

    # --- answers

    def _start_worker(self) -> bool:
        thread = threading.Thread(target=self._work, name="api-worker", daemon=True)
        try:
            thread.start()
        except RuntimeError:  # no thread (a pids limit): the ones there are carry on
            return False
        self._workers.append(thread)
        return True

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            conn, environ = item
            self._respond(conn, environ)

    def _respond(self, conn: socket.socket, environ: dict[str, Any]) -> None:
        httpwire.respond(conn, self.app, environ, WRITE_TIMEOUT)  # (then closed)

    def _answer_now(self, conn: socket.socket, status: int, body: dict[str, Any]) -> None:
        httpwire.answer_json(conn, status, body, WRITE_TIMEOUT)
