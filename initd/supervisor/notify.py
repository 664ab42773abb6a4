"""A service that says itself when it is ready: systemd's sd_notify (``READY=1`` in a
datagram to ``$NOTIFY_SOCKET``) or s6's notification fd (a newline written to fd N).

The socket is bound by root in a directory of root's that others may only pass through
(0711), and is the service's user's alone (0600): another user's process, the agent's
included, cannot send to it (connect and sendto need write permission on the socket
file). Root reads at most one datagram of MAX_DATAGRAM bytes per wake-up, and never
acts on anything but READY=1 (and keeps STATUS=, cut, for people).

The notification fd is a pipe: the service gets its write end at the number it asked
for, through a trampoline (Popen keeps a passed descriptor at its own number), and
root reads what arrives until the first newline.
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
import sys
import tempfile

from initd.state import agentfs

MAX_DATAGRAM = 4096
MAX_STATUS = 200
# fd N in the child: the write end (passed at its own number) moved there, then exec
TRAMPOLINE = ("import os, sys\nsrc, dst = int(sys.argv[1]), int(sys.argv[2])\n"
              "os.dup2(src, dst, inheritable=True)\nos.close(src)\n"
              "try:\n    os.execvp(sys.argv[4], sys.argv[4:])\n"
              "except OSError as err:\n"
              "    sys.stderr.write(f'initd: {sys.argv[4]}: {err.strerror}\\n')\n"
              "    sys.exit(127 if isinstance(err, FileNotFoundError) else 126)\n")


class NotifySocket:
    """``$NOTIFY_SOCKET`` for one service: readable when it sent something."""

    def __init__(self, name: str, uid: int | None) -> None:
        parent = "/run" if os.geteuid() == 0 and os.access("/run", os.W_OK) else None
        self.directory = tempfile.mkdtemp(prefix=f"initd-notify-{name}-", dir=parent)
        self.path = os.path.join(self.directory, "notify")
        self.status: str | None = None
        self.ended = False  # (a socket never ends)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK
                                  | socket.SOCK_CLOEXEC)
        try:
            self.sock.bind(self.path)
            other = uid is not None and uid != os.geteuid()
            if not agentfs.give_socket(self.path, uid if other else None):
                raise PermissionError(errno.EPERM, "cannot give it to the service's user "
                                      "(no CAP_CHOWN?)")
            if other:  # (they pass through root's directory to their socket, no more)
                os.chmod(self.directory, 0o711)
        except OSError:
            self.close()
            raise

    def fileno(self) -> int:
        return self.sock.fileno()

    def env(self) -> dict[str, str]:
        return {"NOTIFY_SOCKET": self.path}

    def forget(self) -> None:
        """What a former start of the service sent, dropped before the next one."""
        for _ in range(1024):
            try:
                self.sock.recv(MAX_DATAGRAM)
            except OSError:
                return

    def ready(self) -> bool:
        """What arrived (one datagram at most per call): True on READY=1."""
        try:
            data = self.sock.recv(MAX_DATAGRAM)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return False
        said = False
        for line in data.split(b"\n"):
            if line == b"READY=1":
                said = True
            elif line.startswith(b"STATUS="):
                self.status = line[7:MAX_STATUS + 7].decode("utf-8", "replace")
        return said

    def close(self) -> None:
        self.sock.close()
        shutil.rmtree(self.directory, ignore_errors=True)  # (root's directory: no link)


class NotifyFd:
    """s6's notification-fd: the write end given to the service at ``fd``."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.read_end, self.write_end = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self.status = None
        self.ended = False  # its write end closed without a line: nothing more to read

    def fileno(self) -> int:
        return self.read_end

    def wrap(self, argv: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """The service's argv through the trampoline, and the descriptor to pass."""
        return ((sys.executable, "-I", "-S", "-c", TRAMPOLINE, str(self.write_end),
                 str(self.fd), "--", *argv), (self.write_end,))

    def started(self) -> None:
        """Root's copy of the write end goes: an exit without a line is an EOF."""
        if self.write_end >= 0:
            os.close(self.write_end)
            self.write_end = -1

    def ready(self) -> bool:
        try:
            data = os.read(self.read_end, MAX_DATAGRAM)
        except (BlockingIOError, InterruptedError):
            return False
        self.ended = data == b""
        return b"\n" in data

    def close(self) -> None:
        for fd in (self.read_end, self.write_end):
            if fd >= 0:
                os.close(fd)
        self.read_end = self.write_end = -1
