"""The control API's server: HTTP/1.0 for a WSGI app on a listening socket. One thread
reads every request, answers probes and a cancel itself, and gives the rest to a few
workers, so that a cancel is served while a turn's evaluation runs and no client,
however it behaves, holds a thread before its request is whole. Under initd root binds
the socket (bind.py) and the hook service inherits it, as from systemd's socket
activation: a request made while the service restarts waits in the backlog. The wire's
forms are wire.py's.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from initd.errors import shown
from initd.http import wire
from initd.http.bind import BACKLOG as BACKLOG  # (here too: callers name the server's)
from initd.http.bind import listen as listen
from initd.http.spool import Spool
from initd.http.wire import REASONS as REASONS
from initd.http.workers import Workers
from initd.pid1.log import write_line

MAX_WAITING = 1024  # connections still sending their request; past it, the oldest goes
READ_TIMEOUT = 10.0  # seconds a client has to send its request (WRITE_TIMEOUT: its answer)
# The reading thread never waits for a client to take an answer: it sends what fits at
# once (its answers are small, far under a fresh socket's buffer) or drops the
# connection. A client that never reads (a zero window) cannot hold it, nor the probes.
INLINE_WRITE = 0.0
MAX_BUFFERED = 64 * 2**20  # of all requests still arriving; past it, the oldest goes
MAX_BODY = 64 * 1024  # a request's body, unless the server is told more (a larger one is
# read to its end and dropped as it comes, and the app refuses it by its Content-Length)
QUICK = frozenset(("/v1/health", "/v1/ready", "/v1/turn/cancel"))  # answered at once
ACCEPT_BURST = 64  # new connections left waiting for their request in one turn (at most a
# quarter of the cap: reads come first, so a probe accepted in one turn is read before
# the next turns can push it out)
ACCEPT_TURN = 1024  # connections taken from the backlog in one turn at most (then reads
# and expiry): until EAGAIN, as under churn the backlog filled and a probe's SYN was dropped
PAUSE = 0.1  # seconds the thread rests when no descriptor can be had (EMFILE) and no
# connection can make room: the backlog stays readable, and the loop would spin
SAY_EVERY = 10.0  # seconds between two lines about connections that failed


class _Waiting(wire.Arriving):
    """A connection still sending its request: what came so far, and its deadline."""

    __slots__ = ("deadline",)

    def __init__(self, deadline: float) -> None:
        super().__init__()
        self.deadline = deadline


class UnixWSGIServer:
    """HTTP/1.0 on the listening socket, one request per connection, for a WSGI app.

    One thread (``serve_forever``) accepts connections and reads every request whole,
    without a thread per connection: an idle or slowloris client costs a buffer, not a
    thread, and has READ_TIMEOUT for its whole request. A connection is read the moment
    it is accepted: one gone already (connected and closed, as fast as an agent can) or
    whose request is all there is done with, never polled. Health, readiness and a cancel
    are answered by that thread at once; every other request goes to a worker
    (workers.py): behind flooding clients' thread starts a health check would wait in the
    backlog, and a cancel must never wait for the turn it cancels."""

    def __init__(self, sock: socket.socket, app: Callable[..., Iterable[bytes]],
                 quick: frozenset[str] = QUICK, *, inline: bool = False,
                 max_waiting: int | None = None, name: str = "initd service",
                 max_body: int = MAX_BODY, spool: Spool | None = None) -> None:
        self.socket = sock  # already bound and listening: ours, or inherited
        self.quick = quick  # paths answered by the reading thread itself
        self.inline = inline  # every path answered so (an app that only reads a dict)
        self.max_waiting = MAX_WAITING if max_waiting is None else max_waiting
        self.burst = max(1, min(ACCEPT_BURST, self.max_waiting // 4))
        self.name = name  # who says a line about a failure
        self.max_body = max_body  # the service's: an event's payload (a Write's file)
        self.spool = spool  # where a body past SPOOL_AT goes (the service's: spool.py)
        self.socket.setblocking(False)
        self.app = app
        self._poller = select.epoll()
        self._watched: dict[int, socket.socket] = {}  # by descriptor: waiting, polled
        self._waiting: dict[socket.socket, _Waiting] = {}  # oldest first
        self._buffered = 0  # bytes held for them (MAX_BUFFERED)
        self._said_at = -SAY_EVERY  # when a failure was last said
        self._say_lock = threading.Lock()  # (workers say too)
        self.workers = Workers(app, self._say, MAX_BODY)
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
        """Until shutdown. Nothing a client sends, and no failure of one connection, ends
        this loop (invariant 13): that connection is dropped and a line said, at most
        one every SAY_EVERY seconds. (A head this thread could not parse once ended it,
        and root's probe port never answered again.) Idle, it never wakes (a timeout only
        while a connection is still sending: for the oldest, ``poll_interval`` at most)."""
        # EXCLUSIVE: a connection wakes one of the servers sharing the socket (health.py)
        self._poller.register(self.socket.fileno(), select.EPOLLIN | select.EPOLLEXCLUSIVE)
        self._poller.register(self._wake_r, select.EPOLLIN)
        try:
            while not self._stop.is_set():
                oldest = next(iter(self._waiting.values()), None)
                self._turn(None if oldest is None else max(0.0, min(
                    poll_interval, oldest.deadline - time.monotonic())))
        finally:
            self._stopped.set()

    def _turn(self, timeout: float | None) -> None:
        """One turn: what came on the connections first, then new connections (a probe
        read before more connections can push it out), then the expired ones."""
        try:
            events = self._poller.poll(timeout)
        except OSError as err:  # (EINTR is retried by Python itself)
            self._say("cannot wait for connections", err)
            self._stop.wait(PAUSE)
            return
        accept = False
        for fd, _ in events:
            conn = self._watched.get(fd)
            if conn is not None:
                self._guarded(self._read, conn)
            accept = accept or fd == self.socket.fileno()
        if accept:
            self._guarded(self._accept)
        self._guarded(self._expire)

    def _guarded(self, work: Callable[..., object], conn: socket.socket | None = None) -> object:
        """``work`` (on ``conn``) and what it returns; whatever it raises costs ``conn``
        and a line, never the thread."""
        try:
            return work() if conn is None else work(conn)
        except Exception as err:
            if conn is not None:
                self._drop(conn)
            self._say("a connection failed: dropped", err)
            return None

    def _say(self, what: str, err: BaseException) -> None:
        """One line, at most every SAY_EVERY seconds: a flood costs no log."""
        with self._say_lock:
            now = time.monotonic()
            if now - self._said_at < SAY_EVERY:
                return
            self._said_at = now
        write_line(f"{self.name}: {what}: {type(err).__name__}: {shown(str(err))} "
                   f"(said at most every {SAY_EVERY:.0f} s)")

    def shutdown(self) -> None:
        """From another thread: serve_forever returns; workers end after their request."""
        self._stop.set()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"!")
        self._stopped.wait()

    def server_close(self) -> None:
        self.workers.close()
        for conn in list(self._waiting):
            self._drop(conn)
        self._poller.close()
        self.socket.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def _accept(self) -> None:
        """The backlog until it is empty (EAGAIN), ``burst`` new connections are left
        waiting for their request, or ACCEPT_TURN were taken."""
        left = self.burst
        for _ in range(ACCEPT_TURN):
            try:
                conn, _ = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as err:  # EMFILE, ENFILE, ENOBUFS: back-pressure, not a fault
                if self._waiting:  # the oldest makes room
                    self._drop(next(iter(self._waiting)))
                else:  # nothing of ours to give up: the backlog waits a moment
                    self._say("cannot accept a connection", err)
                    self._stop.wait(PAUSE)
                return
            left -= bool(self._guarded(self._arrived, conn))
            if left <= 0:
                return

    def _arrived(self, conn: socket.socket) -> bool:
        """A new connection, read at once (the class says why); True if it is left
        waiting for the rest of its request, polled."""
        chunk: bytes | None
        try:
            conn.setblocking(False)
            chunk = conn.recv(65536)
        except (BlockingIOError, InterruptedError):
            chunk = None
        except OSError:
            chunk = b""
        if chunk == b"":
            conn.close()
            return False
        waiting = self._waiting[conn] = _Waiting(time.monotonic() + READ_TIMEOUT)
        if chunk is not None:
            self._received(conn, waiting, chunk)
        if conn not in self._waiting:
            return False
        if len(self._waiting) > self.max_waiting:  # the one sending longest goes
            self._drop(next(iter(self._waiting)))
        try:
            self._poller.register(conn.fileno(), select.EPOLLIN)
            self._watched[conn.fileno()] = conn
        except (OSError, ValueError) as err:  # (epoll's ENOMEM, ENOSPC: that one goes)
            self._drop(conn)
            self._say("cannot watch a connection", err)
            return False
        return True

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
        self._received(conn, waiting, chunk)

    def _received(self, conn: socket.socket, waiting: _Waiting, chunk: bytes) -> None:
        """What came on ``conn``: its request answered (or given to a worker) once it is
        whole."""
        waiting.data += chunk
        self._buffered += len(chunk)
        while self._buffered > MAX_BUFFERED:  # the oldest others make room
            victim = next((other for other in self._waiting if other is not conn), None)
            if victim is None:
                break
            self._drop(victim)
        try:
            environ = self._request(waiting)
        except wire.Refused as refused:
            self._forget(conn)
            wire.answer_json(conn, refused.status, {"error": str(refused)}, INLINE_WRITE)
            return
        if environ is None:
            return  # more to come
        self._forget(conn)
        if self.inline or environ["PATH_INFO"] in self.quick:
            wire.respond(conn, self.app, environ, INLINE_WRITE,  # (then closed)
                         lambda: wire.let_go(environ))
            return
        no_room = self.workers.give(conn, environ)
        if no_room is not None:
            wire.let_go(environ)
            wire.answer_json(conn, 503, {"error": no_room}, INLINE_WRITE)

    def _request(self, waiting: _Waiting) -> dict[str, Any] | None:
        """The request's WSGI environ once it is all there; None while more is to come."""
        held = len(waiting.data)
        try:
            whole = waiting.whole(self.max_body, self.spool)
        finally:
            self._buffered -= held - len(waiting.data)  # (the head, once parsed)
        return None if whole is None else wire.wsgi_environ(self.base_environ, *whole)

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
            if waiting.body is not None:  # (gone before its body was all there)
                waiting.body.close()
        if self._watched.pop(conn.fileno(), None) is not None:
            with contextlib.suppress(OSError):
                self._poller.unregister(conn.fileno())

    def _drop(self, conn: socket.socket) -> None:
        self._forget(conn)
        with contextlib.suppress(OSError):
            conn.close()
