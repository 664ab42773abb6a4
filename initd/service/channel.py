"""The private channel between the root supervisor and the hook service it started.

One end of a ``socketpair`` each, inherited by the service at a known fd: no file system
path, so nobody else can connect (a Unix socket in /run would be one more thing to
protect). Messages are JSON objects, one per line. The supervisor pushes what it knows
(``state``: the agent's and the service's lifecycle) and answers requests (``root-hook``,
``precommit``) with a ``reply`` carrying the request's ``id``; the service says
``ready`` once it serves, and may ``cancel`` a request still running.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from typing import Any

Message = dict[str, Any]
MAX_LINE = 8 * 2**20  # a longer line is not ours: the peer is broken, the channel closed


class Channel:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = bytearray()
        self._send_lock = threading.Lock()  # replies come from worker threads
        self.closed = False

    @classmethod
    def pair(cls) -> tuple[Channel, int]:
        """The parent's end, and the fd of the child's end (inheritable: pass it on)."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        theirs.set_inheritable(True)
        return cls(mine), theirs.detach()

    @classmethod
    def from_fd(cls, fd: int) -> Channel:
        return cls(socket.socket(fileno=fd))

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, message: Message) -> bool:
        """False when the peer is gone (it may be restarting: the caller carries on)."""
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        with self._send_lock:
            if self.closed:
                return False
            try:
                self.sock.sendall(data)
            except OSError:
                return False
        return True

    def receive(self) -> list[Message] | None:
        """One read (call it when the socket is readable, or it blocks): the complete
        messages it finished, or None once the peer has gone (or broke the protocol)."""
        try:
            chunk = self.sock.recv(65536)
        except OSError:
            chunk = b""
        if not chunk:
            return None
        self._buffer += chunk
        messages = []
        while (end := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            try:
                message = json.loads(line)
            except ValueError:
                return None
            if not isinstance(message, dict):
                return None
            messages.append(message)
        if len(self._buffer) > MAX_LINE:
            return None
        return messages

    def close(self) -> None:
        with self._send_lock:
            if self.closed:
                return
            self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in recv
        except OSError:
            pass
        self.sock.close()


def close_fd(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
