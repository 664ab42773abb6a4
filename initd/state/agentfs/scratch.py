"""A file with no name in an open directory: scratch space its process alone holds (the
hook service's request bodies: http/spool.py). It is made unnamed (O_TMPFILE), or, where
the file system cannot, made under a random new name (O_EXCL|O_NOFOLLOW: never a link or
a FIFO someone planted) and unlinked at once. Nothing is left in the directory whatever
happens after, a crash included: the file is gone with its last descriptor."""

from __future__ import annotations

import errno
import os

from initd.state.agentfs.common import NEW
from initd.state.agentfs.directory import Dir

UNNAMED = os.O_TMPFILE | os.O_RDWR | os.O_CLOEXEC
# What a file system without O_TMPFILE says (EOPNOTSUPP, or EISDIR from a kernel that
# takes the flag for O_DIRECTORY)
NO_TMPFILE = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL)


def unnamed(where: Dir) -> int:
    """A new empty file in ``where``, open for reading and writing, that no name leads
    to (0600, its maker's); OSError when it cannot be made (a full disk, no room for a
    descriptor, a directory that cannot be written)."""
    try:
        return os.open(".", UNNAMED, 0o600, dir_fd=where.fd)
    except OSError as err:
        if err.errno not in NO_TMPFILE:
            raise
    name = f".scratch.{os.urandom(8).hex()}"
    fd = os.open(name, NEW & ~os.O_WRONLY | os.O_RDWR, 0o600, dir_fd=where.fd)
    try:
        os.unlink(name, dir_fd=where.fd)
    except BaseException:
        os.close(fd)
        raise
    return fd
