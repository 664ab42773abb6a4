"""The two calls of agentfs that take a path as named, outside any walk: a file read
wherever its path leads (a hook file may be a link), never a FIFO or more than its limit;
and the control socket root has just bound, given to the agent's group."""

from __future__ import annotations

import errno
import os
import stat

from initd.state.agentfs.common import Unsafe, read_limited


def read_regular(path: str, limit: int, *, whole: bool = False,
                 follow: bool = True) -> tuple[bytes, os.stat_result]:
    """A file wherever ``path`` leads (links followed, unless not ``follow``: then a link
    at its end is Unsafe, ELOOP), with its status: never a FIFO, device or directory
    (opened non-blocking, checked with fstat on the open file, so no swap can slip in
    between), never more than ``limit`` bytes (with ``whole``, a longer file is Unsafe
    instead of cut)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
                     | (0 if follow else os.O_NOFOLLOW))
    except OSError as err:
        if not follow and err.errno == errno.ELOOP:
            raise Unsafe(errno.ELOOP, f"{path}: a symbolic link: not read") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unsafe(errno.EINVAL, f"{path}: not a regular file: not read")
        return read_limited(fd, limit, path, whole=whole), info
    finally:
        os.close(fd)


def give_group(path: str, gid: int) -> bool:
    """The control socket root has just bound goes to the agent's group: the name itself
    (a link swapped in there is changed, never what it names). False when not allowed
    (no CAP_CHOWN): the caller says what that costs."""
    try:
        os.chown(path, -1, gid, follow_symlinks=False)
    except PermissionError:
        return False
    return True


def give_socket(path: str, uid: int | None) -> bool:
    """A socket root has just bound, in a directory of root's own nobody else may write
    (supervisor/notify.py's), made ``uid``'s alone (0600: only that user may send to it;
    None: root's, 0600). False when not allowed (no CAP_CHOWN): it stays root's, and the
    service cannot say it is ready (the caller says so)."""
    os.chmod(path, 0o600)  # (a socket: there is no following to fear in root's directory)
    if uid is None:
        return True
    try:
        os.chown(path, uid, -1, follow_symlinks=False)
    except PermissionError:
        return False
    return True
