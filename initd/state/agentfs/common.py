"""What every part of agentfs shares: the open flags, Unsafe, an owner, and the
primitives under every walk, read and write: a name checked to be a plain one, a read
that stops at its limit, and a chown (of a file's descriptor, or of a link in a
directory of root's own) that may be refused (remembered, said once)."""

from __future__ import annotations

import errno
import os

Owner = tuple[int, int]  # (uid, gid)

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
LINKS = (errno.ELOOP, errno.ENOTDIR)  # what O_NOFOLLOW|O_DIRECTORY says about a link


class Unsafe(OSError):
    """Root will not do this: a link, not a regular file, someone else's file, too big.
    The message names the path and says why (an OSError: callers that handle a failed
    write handle this too)."""

    def __str__(self) -> str:
        return str(self.strerror)


_refused: list[str] = []  # what could not be given to its owner (no CAP_CHOWN)


def refused_chowns() -> list[str]:
    """What root made for the agent but could not give it, since the last call (so that
    the caller says it once: the agent's service may not write there)."""
    found = list(_refused)
    _refused.clear()
    return found


def fchown(fd: int, owner: Owner) -> None:
    """Give what root just made to its owner; without CAP_CHOWN (--cap-drop CHOWN) it stays
    root's, readable by all: the agent's own writes there fail, said once by the caller."""
    try:
        os.fchown(fd, *owner)
    except PermissionError:
        if not _refused:
            _refused.append(os.readlink(f"/proc/self/fd/{fd}"))


def lchown(dir_fd: int, name: str, owner: Owner, where: str) -> None:
    """Give a link root just made to its owner: ``name`` in ``dir_fd``, itself, never what
    it names (``where``: where it goes, for the note). Only inside a directory nobody
    else may change (directory.py's staging one): by name, elsewhere, it could be
    whatever the owner renamed over it."""
    try:
        os.chown(name, *owner, dir_fd=dir_fd, follow_symlinks=False)
    except PermissionError:
        if not _refused:
            _refused.append(where)


def read_limited(fd: int, limit: int, where: str, whole: bool = True) -> bytes:
    """At most ``limit`` bytes; with ``whole``, a longer file is Unsafe instead."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = os.read(fd, min(1 << 20, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:
        if whole:
            raise Unsafe(errno.EFBIG, f"{where}: over {limit} bytes: not read")
        data = data[:limit]
    return data


def check_name(name: str) -> None:
    if not name or "/" in name or name in (".", "..") or "\0" in name:
        raise ValueError(f"not a plain file name: {name!r}")
