"""The control API on a Unix socket: mode 0660, group of the agent user.

Threaded, so that a cancel is served while a turn's evaluation runs. Who may connect is
decided by the socket file's owner, group and mode, like docker.sock. Under initd the
root supervisor binds the socket once and the hook service inherits it (as systemd's
socket activation passes one): /run/initd stays root's, and a request made while the
service restarts waits in the backlog instead of being refused.
"""

from __future__ import annotations

import os
import socket
import socketserver
import stat
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler

from initd import agentfs
from initd.errors import InitdError

BACKLOG = 64
MAX_CONNECTIONS = 1024  # held at once; past it, the oldest still sending is dropped
READ_TIMEOUT = 10.0  # seconds a client may stay silent while it sends its request


class _Handler(WSGIRequestHandler):
    timeout = READ_TIMEOUT  # an idle or slowloris connection is dropped, not kept forever

    def handle(self) -> None:
        try:
            super().handle()
        except (TimeoutError, ConnectionError):
            pass  # silent too long, or gone: nothing to answer, nobody to tell

    def setup(self) -> None:
        super().setup()
        self.client_address = ("local", 0)  # a Unix socket has no peer address

    def parse_request(self) -> bool:
        answered = super().parse_request()
        server = self.server
        assert isinstance(server, UnixWSGIServer)
        server.arrived(self.connection)  # its request is in: no longer the one to drop
        return answered

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are not logged: the agent polls health, and stderr is the container's."""


def bind(path: str, group: int | None = None) -> socket.socket:
    """A listening socket at ``path``, born 0660 (never a moment when others may connect),
    in ``group`` when we may give it one. A socket left by a crash is replaced; one that
    someone still serves, or anything else at ``path``, is an error, never deleted."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        if not os.path.isdir(directory):  # root's /run/initd: the agent's group passes
            os.makedirs(directory, mode=0o755 if os.geteuid() == 0 else 0o700)
        _check_directory(directory)
        try:
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                raise InitdError(f"{path} exists and is not a socket: not replacing it "
                                 "(choose another --socket/INITD_SOCKET)")
            if _answers(path):
                raise InitdError(f"{path} is in use: another initd (or something else) "
                                 "serves there; choose another --socket/INITD_SOCKET")
            os.unlink(path)
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o117)
        try:
            sock.bind(path)
        finally:
            os.umask(old)
    except OSError as err:
        raise InitdError(f"cannot listen on {path}: {err.strerror} (choose another "
                         "--socket/INITD_SOCKET, or --no-service)") from None
    # Born 0660 (the umask above): no chmod, which would follow a link swapped in.
    if group is not None and os.geteuid() == 0 and not agentfs.give_group(path, group):
        sock.close()  # root's group, 0660: the agent could not connect; say so instead
        raise InitdError(f"cannot give {path} to the agent's group (no CAP_CHOWN?): the "
                         "agent could not reach the control API")
    sock.listen(BACKLOG)
    return sock


def _check_directory(directory: str) -> None:
    """Not root, the socket lives in a directory anyone could have made first
    (/tmp/initd-UID): it must be a real directory of ours (or root's) that no one else
    may write to, or sticky like /tmp itself, else someone else could put their socket in
    place of ours."""
    info = os.lstat(directory)
    others_may_write = info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX
    if os.geteuid() == 0 or (stat.S_ISDIR(info.st_mode) and not others_may_write
                             and info.st_uid in (0, os.geteuid())):
        return
    raise InitdError(f"cannot listen in {directory}: it is not a directory of uid "
                     f"{os.geteuid()}'s that only its owner may write to (made by someone "
                     "else first?); choose another --socket/INITD_SOCKET")


def _answers(path: str) -> bool:
    """Does a live process listen there? (A crashed one's socket refuses connections.)"""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(path)
        except OSError:
            return False
    return True


class UnixWSGIServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, sock: socket.socket, app: Callable[..., Iterable[bytes]]) -> None:
        super().__init__(sock.getsockname(), _Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock  # already bound and listening: ours, or inherited
        self.app = app
        self._open = 0  # connections held (MAX_CONNECTIONS)
        self._sending: dict[socket.socket, None] = {}  # still sending a request, oldest first
        self._count = threading.Lock()
        self.base_environ = {"SERVER_NAME": "initd", "GATEWAY_INTERFACE": "CGI/1.1",
                             "SERVER_PORT": "0", "REMOTE_HOST": "", "CONTENT_LENGTH": "",
                             "SCRIPT_NAME": ""}

    def get_app(self) -> Callable[..., Iterable[bytes]]:
        return self.app

    # A thread per connection, about MAX_CONNECTIONS at most: 1,500 idle connections once
    # held 1,502 threads and 62 MiB. At the cap, the connection that has been sending its
    # request longest (idle, slowloris) is dropped for the new one, so a client that
    # sends its request at once is served whatever others hold open; only when every
    # connection is busy with a request is the new one closed at once.
    def process_request(self, request: Any, client_address: Any) -> None:
        drop: Any = None
        with self._count:
            if self._open >= MAX_CONNECTIONS:
                drop = next(iter(self._sending), None)
                if drop is None or self._open >= 2 * MAX_CONNECTIONS:  # (drops not gone)
                    drop = request
                else:
                    del self._sending[drop]
            if drop is not request:
                self._open += 1
                self._sending[request] = None
        if drop is not None:
            try:
                drop.shutdown(socket.SHUT_RDWR)  # its thread reads the end and is gone
            except OSError:
                pass
        if drop is request:
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except RuntimeError:  # no thread (a pids limit): this connection is closed
            self._done(request)
            self.shutdown_request(request)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._done(request)

    def arrived(self, request: Any) -> None:
        with self._count:
            self._sending.pop(request, None)

    def _done(self, request: Any) -> None:
        with self._count:
            self._open -= 1
            self._sending.pop(request, None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line, not socketserver's traceback: a request's failure is not initd's."""
        print(f"initd service: a connection failed: {sys.exc_info()[1]!r}", file=sys.stderr,
              flush=True)
