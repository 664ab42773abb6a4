"""A service's log files: ``current`` in its directory, rotated to ``current.1`` …
``current.N`` by renames within that directory, so that the files together never pass
(N+1) times max_bytes. Written by the service's logger (svlog.py), a process of the
service's own user, never root's: whatever it opens is what that user may open.

This is s6-log's logdir, as its documentation describes the ``s`` (the largest size of
``current``) and ``n`` (how many archived files are kept) directives and the rotation
(https://skarnet.org/software/s6/s6-log.html, read 2026-11-28): lines go to
``current``; when it would pass the size, it is renamed away and a new ``current`` is
begun, at a line's end when there is one to cut at; the oldest archive beyond the count
is dropped. Where s6-log names an archive by its TAI64N time, initd names it ``current.K``
(1 the newest), as logrotate does.

A directory that cannot be written (a full disk, EACCES, a directory gone) never stops
the logger: it keeps draining its pipe (the service must never block, nor get SIGPIPE,
because of its logger), says so once, and tries the files again every RETRY seconds.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

CURRENT = "current"
RETRY = 10.0  # seconds between tries at files that could not be written
APPEND = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
MODE = 0o640  # the service's user reads and writes; its group reads


class Files:
    """``current`` and its ``backups`` in ``directory``. ``say(problem)``: a line for
    initd's log when the files stop being written (the reason) or are again (None)."""

    def __init__(self, directory: str, max_bytes: int, backups: int,
                 say: Callable[[str | None], None]) -> None:
        self.directory = directory
        self.max_bytes = max(1, max_bytes)
        self.backups = max(0, backups)
        self.say = say
        self.dir_fd = -1
        self.fd = -1
        self.size = 0  # bytes in current
        self.failed: str | None = None  # why the files are not written now
        self.retry_at = 0.0

    def write(self, data: bytes) -> None:
        """``data`` into current, rotating as it fills; on a failure, what is left of
        ``data`` is not written (the output still reaches initd's log)."""
        if self.fd < 0 and not self._open():
            return
        try:
            self._write(data)
        except OSError as err:
            self._fail(err)

    def close(self) -> None:
        for fd in (self.fd, self.dir_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.fd = self.dir_fd = -1

    def _write(self, data: bytes) -> None:
        at = 0
        while at < len(data):
            room = max(0, self.max_bytes - self.size)
            end = min(len(data), at + room)
            if end < len(data):  # current would pass max_bytes: cut at a line's end
                line_end = data.rfind(b"\n", at, end) + 1
                if line_end > at:
                    end = line_end
                elif self.size:  # no line ends in the room left: begin a new file
                    end = at
            self._put(memoryview(data)[at:end])
            at = end
            if at < len(data):
                self._rotate()

    def _put(self, chunk: memoryview) -> None:
        while chunk:
            done = os.write(self.fd, chunk)
            self.size += done
            chunk = chunk[done:]

    def _rotate(self) -> None:
        """current → current.1 → … → current.N (the oldest one replaced), then a new
        current. Renames in the directory, never a copy: nothing is read back."""
        os.close(self.fd)
        self.fd = -1
        for k in range(self.backups, 0, -1):
            self._move(CURRENT if k == 1 else f"{CURRENT}.{k - 1}", f"{CURRENT}.{k}")
        if self.backups == 0:
            _unlink(self.dir_fd, CURRENT)
        self.fd = self._new()
        self.size = 0

    def _move(self, old: str, new: str) -> None:
        """``old`` renamed to ``new`` (a missing ``old``: nothing to do; a directory
        planted at ``new``: renamed aside first, so that rotation goes on)."""
        try:
            os.rename(old, new, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        except FileNotFoundError:
            return
        except OSError as err:
            if err.errno not in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
                raise
            _unlink(self.dir_fd, new)
            os.rename(old, new, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)

    def _open(self) -> bool:
        """The directory and current (appended to), at the start and after a failure,
        then no more often than every RETRY seconds."""
        if self.failed is not None and time.monotonic() < self.retry_at:
            return False
        try:
            if self.dir_fd < 0:
                self.dir_fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY
                                      | os.O_NOFOLLOW | os.O_CLOEXEC)
            self.fd = self._current()
            self.size = os.fstat(self.fd).st_size
        except OSError as err:
            self._fail(err)
            return False
        if self.failed is not None:
            self.failed = None
            self.say(None)
        return True

    def _current(self) -> int:
        """current, to append to: a regular file of this user's. Anything else there (a
        link, a FIFO, a directory, someone else's file, even one this user may write) is
        removed from this directory, the service user's own, and a new current made in
        its place: the output goes nowhere another user chose."""
        try:
            fd = os.open(CURRENT, APPEND, dir_fd=self.dir_fd)
        except FileNotFoundError:
            return self._new()
        except OSError as err:
            if err.errno not in (errno.ELOOP, errno.ENXIO, errno.EACCES, errno.EISDIR):
                raise
            _unlink(self.dir_fd, CURRENT)
            return self._new()
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid():
            return fd
        os.close(fd)
        _unlink(self.dir_fd, CURRENT)
        return self._new()

    def _new(self) -> int:
        return os.open(CURRENT, APPEND | os.O_CREAT | os.O_EXCL, MODE, dir_fd=self.dir_fd)

    def _fail(self, err: OSError) -> None:
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1
        if err.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP) and self.dir_fd >= 0:
            os.close(self.dir_fd)  # the directory itself is gone: opened again next time
            self.dir_fd = -1
        self.retry_at = time.monotonic() + RETRY
        if self.failed is None:
            self.failed = f"{self.directory}: {err.strerror or err}"
            self.say(self.failed)


def _unlink(dir_fd: int, name: str) -> None:
    """``name`` gone from the directory (a directory planted there: renamed aside)."""
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        os.rename(name, f".{name}.{os.urandom(4).hex()}", src_dir_fd=dir_fd,
                  dst_dir_fd=dir_fd)
