"""The private channel between the root supervisor and the hook service it started.

One end of a ``socketpair`` each, inherited by the service at a known fd: no file system
path, so nobody else can connect (a Unix socket in /run would be one more thing to
protect). Messages are JSON objects, one per line. The supervisor pushes what it knows
(``state``: the agent's and the service's lifecycle) and answers requests
(``precommit``, ``trust``) with a ``reply`` carrying the request's ``id``; the service
says ``ready`` once it serves, may ``cancel`` a request still running, and says what it
counted (``metrics``, for root's /metrics: data, never answered).
"""

from __future__ import annotations

import json
import math
import os
import select
import socket
import threading
import time
from typing import Any

Message = dict[str, Any]
MAX_LINE = 2 * 2**20  # from the supervisor: a hook's result (head and tail) fits well
MAX_REQUEST = 16 * 2**10  # from the service (the agent's, invariant 8): requests are tiny
# (a trust question holds a path; the largest summary of what it counted, hookcounts.py,
# is under 16 KiB). Every line root takes is JSON it decodes, 50 a second: 16 KiB bounds
# what a flood of well-formed ones costs it


class ProtocolError(Exception):
    """The peer sent what is not a message of ours: not JSON, not an object, a line too
    long. The message says which, in a few words (never the data)."""


class Channel:
    def __init__(self, sock: socket.socket, max_line: int = MAX_LINE) -> None:
        self.sock = sock
        self.max_line = max_line
        self._buffer = bytearray()
        self._send_lock = threading.Lock()  # replies come from worker threads
        self.closed = False

    @classmethod
    def pair(cls) -> tuple[Channel, int]:
        """The parent's end (which takes only short lines: what comes back is the
        agent's), and the fd of the child's end (inheritable: pass it on)."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        theirs.set_inheritable(True)
        return cls(mine, MAX_REQUEST), theirs.detach()

    @classmethod
    def from_fd(cls, fd: int) -> Channel:
        return cls(socket.socket(fileno=fd))

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, message: Message, wait: float | None = None) -> bool:
        """False when the message could not go: the peer is gone (it may be restarting:
        the caller carries on), or (with ``wait``) it has not read for that long. A send
        that stops half-way closes the channel: the stream would be garbage after it. The
        supervisor never blocks on the service (the agent's: it may stop reading)."""
        data = memoryview(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        with self._send_lock:
            if self.closed:
                return False
            if wait is None:
                try:
                    self.sock.sendall(data)
                except OSError:
                    return False
                return True
            deadline = time.monotonic() + wait
            while data:
                try:
                    data = data[self.sock.send(data, socket.MSG_DONTWAIT) :]
                    continue
                except BlockingIOError:
                    left = deadline - time.monotonic()
                    if left > 0 and _writable(self.sock, left):
                        continue
                except OSError:
                    pass
                self._close_locked()
                return False
        return True

    def receive(self, size: int = 65536) -> list[Message] | None:
        """One read of at most ``size`` bytes (call it when the socket is readable, or it
        blocks): the complete messages it finished, or None once the peer has gone.
        Raises ProtocolError for anything that is not a message of ours (the caller
        closes the channel)."""
        try:
            chunk = self.sock.recv(size)
        except OSError:
            chunk = b""
        if not chunk:
            return None
        self._buffer += chunk
        messages = []
        while (end := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            if len(line) > self.max_line:
                raise ProtocolError(f"a line of {len(line)} bytes")
            try:
                message = json.loads(line)
            except ValueError:
                raise ProtocolError("a line that is not JSON") from None
            except RecursionError:
                raise ProtocolError("JSON nested too deep") from None
            if not isinstance(message, dict):
                raise ProtocolError("JSON that is not an object")
            messages.append(message)
        if len(self._buffer) > self.max_line:
            raise ProtocolError(f"a line of over {self.max_line} bytes")
        return messages

    def close(self) -> None:
        # Shut down first, without the lock: a worker's reply may hold it for up to its
        # wait, on a peer that does not read (the agent can keep the service's end open),
        # and the supervisor's loop must not wait with it. The shutdown wakes that reply.
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # (closed already)
        with self._send_lock:
            self._close_locked()

    def _close_locked(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in recv
        except OSError:
            pass
        self.sock.close()


def _writable(sock: socket.socket, timeout: float) -> bool:
    """Can ``sock`` take more within ``timeout`` s? poll, never select (invariant 13: a
    supervisor's descriptors may be above 1023)."""
    poller = select.poll()
    poller.register(sock, select.POLLOUT)
    return bool(poller.poll(math.ceil(timeout * 1000)))


def close_fd(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
