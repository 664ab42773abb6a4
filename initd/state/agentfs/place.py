"""Where a directory of agentfs is, and the walk to it: from a base root trusts, one
component at a time with O_NOFOLLOW (a link on the way is refused, never followed), what
is missing made and given to the owner, the directory held open at the end."""

from __future__ import annotations

import errno
import os
import stat
from typing import NamedTuple

from initd.state.agentfs.common import DIRECTORY, LINKS, Owner, Unsafe, check_name, fchown
from initd.state.agentfs.directory import Dir


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
        agent can write (its home, /tmp): the base is the deepest directory reached from
        / by steps only root can have made (``_trusted``), and every component below it
        is walked without following a link. /var/lib/x stays one trusted base;
        ~agent/state is walked from /home; a link someone else planted in /tmp is where
        root stops trusting, and the walk refuses it."""
        base, parts = "/", [p for p in os.path.normpath(os.path.abspath(path)).split("/")
                            if p]
        while parts:
            nxt = _trusted(base, parts[0])
            if nxt is None:
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


def _trusted(base: str, name: str) -> str | None:
    """Where ``name`` in ``base`` (a trusted directory) leads, if only root can have put
    it there and only root can change it: a root directory, or a root link (followed,
    its whole target trusted too), in a directory nobody else may rename entries of
    (not writable by others, or sticky: then only the entry's owner may). None: not so,
    and the walk goes on from ``base`` without following anything."""
    path = os.path.join(base, name)
    try:
        above, entry = os.lstat(base), os.lstat(path)
    except OSError:
        return None
    if entry.st_uid != 0 or above.st_uid != 0 or (
            above.st_mode & 0o022 and not above.st_mode & 0o1000):
        return None
    if stat.S_ISDIR(entry.st_mode):
        return path
    if not stat.S_ISLNK(entry.st_mode):
        return None
    target, at = os.path.realpath(path), "/"  # (resolved: no link left in it)
    for part in (p for p in target.split("/") if p):
        step = _trusted(at, part)
        if step is None:
            return None
        at = step
    return at


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


def below(parent: Dir, name: str, owner: Owner | None, mode: int) -> Dir:
    """The directory ``name`` in ``parent`` (root's own, checked by the caller), never
    through a link, made if missing, then ``owner``'s with ``mode`` (None: this process's
    own): one of root's (just made, or an image's) is given to ``owner``; one of
    ``owner``'s is kept; anything else there (a link, a file, a FIFO, a directory of
    another uid's) is Unsafe, named, and left as it is."""
    check_name(name)
    path = os.path.join(parent.path, name)
    fd = _step(parent.fd, name, path, True, owner)
    try:
        info = os.fstat(fd)
        uid = os.geteuid() if owner is None else owner[0]
        if info.st_uid not in (uid, 0):
            raise Unsafe(errno.EPERM, f"{path} belongs to uid {info.st_uid}, not to root "
                                      f"or uid {uid}: not used")
        if owner is not None and info.st_uid != uid and os.geteuid() == 0:
            fchown(fd, owner)  # root's, opened without following: none swapped in
        os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        raise
    return Dir(fd, path, owner)
