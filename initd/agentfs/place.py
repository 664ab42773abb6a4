"""Where a directory of agentfs is, and the walk to it: from a base root trusts, one
component at a time with O_NOFOLLOW (a link on the way is refused, never followed), what
is missing made and given to the owner, the directory held open at the end."""

from __future__ import annotations

import errno
import os
from typing import NamedTuple

from initd.agentfs.common import DIRECTORY, LINKS, Owner, Unsafe, check_name, fchown
from initd.agentfs.directory import Dir


class Place(NamedTuple):
    """A directory: ``base`` (trusted, opened as named) then ``parts`` (never a link)."""

    base: str
    parts: tuple[str, ...] = ()
    owner: Owner | None = None  # who what root makes here belongs to; None: no boundary
    base_uid: int | None = None  # the base itself must belong to this uid (else Unsafe)

    @property
    def path(self) -> str:
        return os.path.join(self.base, *self.parts)

    def child(self, *names: str) -> Place:
        return self._replace(parts=(*self.parts, *names))

    @classmethod
    def named(cls, path: str, owner: Owner | None = None) -> Place:
        """A directory an operator named (``--state-dir``), which may lie in a tree the
        agent can write (its home): the base is the deepest ancestor that only root can
        change (``root_only``), and every component below it is walked without following
        a link. /var/lib/x stays one trusted base; ~agent/state is walked from /home."""
        base, parts = "/", [p for p in os.path.normpath(os.path.abspath(path)).split("/")
                            if p]
        while parts:
            nxt = os.path.realpath(os.path.join(base, parts[0]))  # (a link root made)
            if not root_only(nxt) or not os.path.isdir(nxt):
                break
            base = nxt
            parts.pop(0)
        return cls(base, tuple(parts), owner)

    def open(self, create: bool = False) -> Dir:
        """The directory, held open; ``create`` makes what is missing (given to the
        owner). FileNotFoundError when it is missing and not ``create``; Unsafe when
        a component is a link or not a directory."""
        # A base given with base_uid is one the agent may name (a worktree's git dir):
        # opened without following a link there, never made, its owner checked before
        # anything is done in it. Any other base is trusted (root's, or the agent's home
        # as passwd says, in root's /home): made when missing.
        fd = _open_base(self.base, create and self.base_uid is None, self.owner,
                        follow=self.base_uid is None)
        try:
            info = os.fstat(fd)
            if self.base_uid is not None and info.st_uid != self.base_uid:
                raise Unsafe(errno.EPERM, f"{self.base} belongs to uid {info.st_uid}, not "
                                          f"to uid {self.base_uid}: not touched")
            at = self.base
            for name in self.parts:
                check_name(name)
                at = os.path.join(at, name)
                step = _step(fd, name, at, create, self.owner)
                os.close(fd)
                fd = step
        except BaseException:
            os.close(fd)
            raise
        return Dir(fd, self.path, self.owner)


def root_only(path: str) -> bool:
    """``path`` (resolved) and each directory above it are root's, and none of those
    above lets anyone else rename or replace what is in it (not writable by group or
    others, or sticky: then others cannot rename root's entries). Errors: not so."""
    try:
        if os.lstat(path).st_uid != 0:
            return False
        above = os.path.dirname(path)
        while True:
            info = os.lstat(above)
            if info.st_uid != 0 or (info.st_mode & 0o022 and not info.st_mode & 0o1000):
                return False
            if above == "/":
                return True
            above = os.path.dirname(above)
    except OSError:
        return False


def _open_base(base: str, create: bool, owner: Owner | None, follow: bool = True) -> int:
    try:
        return os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
                       | (0 if follow else os.O_NOFOLLOW))
    except FileNotFoundError:
        if not create:
            raise
    except OSError as err:
        if not follow and err.errno in LINKS:
            raise Unsafe(err.errno, f"{base} is a symbolic link or not a directory: not "
                                    "followed") from None
        raise
    os.makedirs(base, 0o755, exist_ok=True)  # its parents are trusted: root's, or ours
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    if owner is not None and os.geteuid() == 0 and os.fstat(fd).st_uid == 0:
        fchown(fd, owner)  # made just now (a home that useradd did not create)
    return fd


def _step(parent: int, name: str, path: str, create: bool, owner: Owner | None) -> int:
    """One component down from ``parent``, never through a link; made if missing."""
    made = False
    for _ in range(2):
        try:
            fd = os.open(name, DIRECTORY, dir_fd=parent)
            break
        except FileNotFoundError:
            if not create:
                raise
            try:
                os.mkdir(name, 0o755, dir_fd=parent)
                made = True
            except FileExistsError:
                pass  # made meanwhile: open what is there (if it is a directory)
        except OSError as err:
            if err.errno in LINKS:
                raise Unsafe(err.errno, f"{path} is a symbolic link or not a directory: "
                                        "root follows no link in the agent's files (remove "
                                        "it; a mount there is fine)") from None
            raise
    else:
        raise FileNotFoundError(errno.ENOENT, f"{path}: could not be made", path)
    if made and owner is not None and os.geteuid() == 0 and os.fstat(fd).st_uid == 0:
        fchown(fd, owner)  # ours, just made (the uid check: not a swapped-in one)
    return fd
