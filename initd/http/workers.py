"""The workers that answer what the server's reading thread (server.py) could not answer
at once: at most WORKERS threads, started as requests come; at most MAX_QUEUED requests
waiting for one; and the bodies over the server's small-body size counted against
MAX_HELD while they wait or are at work: what the app holds of them once it has read
them (a spooled body waits in its file, spool.py, but 16 events of 16 MiB read at once
would hold 16 payloads in memory). A request that finds no room is refused with a 503,
never held."""

from __future__ import annotations

import contextlib
import queue
import socket
import threading
from collections.abc import Callable, Iterable
from typing import Any

from initd.http import wire
from initd.http.spool import Body

MAX_QUEUED = 1024  # whole requests waiting for a worker; past it, 503 at once
WORKERS = 16  # requests at work at once (discovery, status, a turn, an event's hooks)
WRITE_TIMEOUT = 10.0  # seconds a client has to take its answer (from a worker)
MAX_HELD = 16 * 2**20  # of the bodies over the small size, waiting or at work: one
# event's payload of the largest the service takes (app.EVENT_BODY), or several smaller


class Workers:
    def __init__(self, app: Callable[..., Iterable[bytes]],
                 say: Callable[[str, BaseException], None], small: int) -> None:
        self.app, self.say, self.small = app, say, small
        self.held = 0  # bytes of bodies over ``small`` queued or at work (MAX_HELD)
        self._held_lock = threading.Lock()  # (workers release what they held)
        self._queue: queue.SimpleQueue[tuple[socket.socket, dict[str, Any], int] | None] = \
            queue.SimpleQueue()
        self._threads: list[threading.Thread] = []

    def give(self, conn: socket.socket, environ: dict[str, Any]) -> str | None:
        """Queue a whole request for a worker (only the reading thread gives), or say why
        there is no room for it."""
        if self._queue.qsize() >= MAX_QUEUED:
            return "too many requests at once; try again"
        if len(self._threads) < WORKERS and not self._start() and not self._threads:
            return "no thread to answer with (a pids limit?); try again"
        held = self._hold(environ)
        if held < 0:
            return "too many large requests at once; try again"
        self._queue.put((conn, environ, held))
        return None

    def close(self) -> None:
        """Each worker ends after the request it is answering."""
        for _ in self._threads:
            self._queue.put(None)

    def _hold(self, environ: dict[str, Any]) -> int:
        """The bytes of a body over ``small``, held until it is answered (0 for a smaller
        one: MAX_QUEUED bounds those); -1 when there is no room for it."""
        body = environ["wsgi.input"]
        size = body.size if isinstance(body, Body) else len(body.getvalue())  # (no copy)
        with self._held_lock:
            if size > self.small and self.held + size > MAX_HELD:
                return -1
            self.held += size if size > self.small else 0
        return size if size > self.small else 0

    def _start(self) -> bool:
        thread = threading.Thread(target=self._work, name="api-worker", daemon=True)
        try:
            thread.start()
        except RuntimeError:  # no thread (a pids limit): the ones there are carry on
            return False
        self._threads.append(thread)
        return True

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            self._answer(*item)

    def _answer(self, conn: socket.socket, environ: dict[str, Any], held: int) -> None:
        """Answer one request; what its body held is let go once the app has answered,
        before the answer is sent (a client that has its answer finds the room it freed)."""
        released: list[bool] = []

        def release() -> None:
            if not released:
                released.append(True)
                wire.let_go(environ)  # (the body itself goes, not only its count)
                with self._held_lock:
                    self.held -= held

        try:
            wire.respond(conn, self.app, environ, WRITE_TIMEOUT, release)  # (then closed)
        except Exception as err:  # (the app's errors are answered: this is ours)
            with contextlib.suppress(OSError):
                conn.close()
            self.say("an answer failed", err)
        finally:
            release()
