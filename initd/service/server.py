"""The control API on a Unix socket: mode 0660, group of the agent user.

Threaded, so that a cancel is served while a turn's evaluation runs. Who may connect is
decided by the socket file's owner, group and mode, like docker.sock.
"""

from __future__ import annotations

import os
import socketserver
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler

DEFAULT_SOCKET = "/run/initd/initd.sock"


class _Handler(WSGIRequestHandler):
    def setup(self) -> None:
        super().setup()
        self.client_address = ("local", 0)  # a Unix socket has no peer address

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are not logged: the agent polls health, and stderr is the container's."""


class UnixWSGIServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, app: Callable[..., Iterable[bytes]],
                 group: int | None = None) -> None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        try:
            os.unlink(path)  # a socket left by a crashed service
        except FileNotFoundError:
            pass
        old = os.umask(0o117)  # born 0660: never a moment when others may connect
        try:
            super().__init__(path, _Handler)
        finally:
            os.umask(old)
        os.chmod(path, 0o660)
        if group is not None and os.geteuid() == 0:
            os.chown(path, -1, group)
        self.app = app
        self.base_environ = {"SERVER_NAME": "initd", "GATEWAY_INTERFACE": "CGI/1.1",
                             "SERVER_PORT": "0", "REMOTE_HOST": "", "CONTENT_LENGTH": "",
                             "SCRIPT_NAME": ""}

    def get_app(self) -> Callable[..., Iterable[bytes]]:
        return self.app
