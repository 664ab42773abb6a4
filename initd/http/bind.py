"""The control API's listening socket: a Unix socket file born 0660, in the agent's group
when root may give it one, bound where no one else could have put theirs first, never in
place of a live socket or of anything but one a crash left.

Who may connect is decided by the socket file's owner, group and mode, like docker.sock.
Root makes it before the agent starts and hands it to the hook service; ``initd
service`` alone makes its own.
"""

from __future__ import annotations

import os
import socket
import stat

from initd.errors import InitdError
from initd.state import agentfs

BACKLOG = 64


def listen(path: str, group: int | None = None) -> socket.socket:
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
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1.0)
        probe.connect(path)
    except OSError:
        return False
    finally:
        probe.close()
    return True
