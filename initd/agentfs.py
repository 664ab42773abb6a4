"""The only way root touches a tree the agent can write (DESIGN.md invariant 8).

After boot the agent is hostile, and it owns its home and the workspace: any name there
may be a symbolic link to /etc/shadow, a hard link to a root file, a FIFO, a 100 MB file,
or be swapped for one of those between a check and a use. So root never opens a path
there by name. It walks to a directory from a base it trusts (the agent's home as passwd
says, the workspace as configured, root's own directories), one component at a time with
O_NOFOLLOW, so a link on the way is refused, never followed; then it works only relative
to that directory's descriptor:

- it reads only regular files that are the tree owner's (fstat on the open descriptor),
  opened non-blocking (a FIFO cannot hang it), never past a size limit;
- it writes only files it has just created under a random name (O_CREAT|O_EXCL|
  O_NOFOLLOW), gives them to the owner with fchown on the descriptor, and renames them
  into place (a link at the final name is replaced, never written through);
- it renames and removes names only inside that directory, and never changes the owner
  of anything it did not make, except a root-owned directory on the walk itself.

The hook service, which runs as the agent, uses the same functions: the rules cost an
unprivileged process nothing, and keep one code path for every writer of a state file.
Nothing else in initd changes an owner (a test greps for it).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO, NamedTuple

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
                _check_name(name)
                at = os.path.join(at, name)
                step = _step(fd, name, at, create, self.owner)
                os.close(fd)
                fd = step
        except BaseException:
            os.close(fd)
            raise
        return Dir(fd, self.path, self.owner)


class Dir:
    """An open directory of a Place: every operation is relative to its descriptor."""

    def __init__(self, fd: int, path: str, owner: Owner | None) -> None:
        self.fd = fd
        self.path = path
        self.owner = owner

    def __enter__(self) -> Dir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def where(self, name: str) -> str:
        return os.path.join(self.path, name)

    def read(self, name: str, limit: int, *, anyone: bool = False,
             whole: bool = True) -> bytes | None:
        """A regular file's bytes (None when there is none). Unsafe when it is a link, not
        a regular file, over ``limit`` bytes (unless not ``whole``: then its first
        ``limit`` bytes), or (unless ``anyone``) not the owner's: a hard link to a root
        file in the agent's tree is never read."""
        _check_name(name)
        try:
            fd = os.open(name, READ, dir_fd=self.fd)
        except FileNotFoundError:
            return None
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.ENXIO, errno.EACCES):
                raise Unsafe(err.errno, f"{self.where(name)}: "
                             f"{'a symbolic link' if err.errno == errno.ELOOP else err.strerror}"
                             ": not read") from None
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise Unsafe(errno.EINVAL, f"{self.where(name)}: not a regular file: not read")
            if not anyone and self.owner is not None and info.st_uid != self.owner[0]:
                raise Unsafe(errno.EPERM, f"{self.where(name)}: belongs to uid "
                                          f"{info.st_uid}, not to uid {self.owner[0]}: not read")
            return _read_limited(fd, limit, self.where(name), whole)
        finally:
            os.close(fd)

    def write(self, name: str, data: bytes, mode: int = 0o644) -> None:
        """Replace ``name`` with ``data``, atomically: a new file (random name, O_EXCL),
        the owner's, fsynced, renamed over whatever ``name`` was (a link included)."""
        tmp, fd = self._new(name, mode)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            self.rename(tmp, name)
        except BaseException:
            self.remove(tmp)
            raise

    def create(self, name: str, mode: int = 0o644) -> BinaryIO:
        """A new, empty file at ``name`` (whatever was there is replaced), open for
        writing: a log others may read while it grows."""
        tmp, fd = self._new(name, mode)
        try:
            self.rename(tmp, name)
        except BaseException:
            os.close(fd)
            self.remove(tmp)
            raise
        return os.fdopen(fd, "wb")

    def append(self, name: str, data: bytes, mode: int = 0o644) -> None:
        """``data`` at the end of ``name`` in one write (O_APPEND: lines of two writers
        never mix), made if missing; never through a link, never into someone else's."""
        _check_name(name)
        flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, mode, dir_fd=self.fd)
            made = True
        except FileExistsError:
            fd = os.open(name, flags, dir_fd=self.fd)  # a link there: ELOOP, refused
            made = False
        try:
            if made:
                self._give(fd)  # made just now, by us: the owner's
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or (
                    self.owner is not None and info.st_uid != self.owner[0]):
                raise Unsafe(errno.EPERM, f"{self.where(name)}: not a regular file of the "
                                          "owner's: not written")
            os.write(fd, data)
        finally:
            os.close(fd)

    def mkdir(self, name: str, mode: int = 0o755) -> None:
        """A new directory ``name`` (FileExistsError when there is one), the owner's."""
        _check_name(name)
        os.mkdir(name, mode, dir_fd=self.fd)
        if self.owner is not None and os.geteuid() == 0:
            fd = os.open(name, DIRECTORY, dir_fd=self.fd)  # a link swapped in: refused
            try:
                if os.fstat(fd).st_uid == 0:  # the one just made, not a swapped-in one
                    _fchown(fd, self.owner)
            finally:
                os.close(fd)

    def symlink(self, target: str, name: str) -> None:
        """``name`` becomes a link to ``target`` (made aside, renamed into place)."""
        tmp = f".{name}.{os.urandom(8).hex()}"
        os.symlink(target, tmp, dir_fd=self.fd)
        try:
            # No chown of the link: by name it could be what the owner renamed over it.
            # A root-owned link in the owner's directory is still the owner's to remove.
            self.rename(tmp, name)
        except BaseException:
            self.remove(tmp)
            raise

    def lock(self, name: str) -> int:
        """A descriptor of the lock file ``name`` to flock (read-only is enough): the
        existing one when it is a regular file of the owner's, else a new one (a link,
        a FIFO or a root file planted there is moved out of the way, never opened)."""
        for _ in range(8):
            try:
                fd = os.open(name, READ, dir_fd=self.fd)
            except FileNotFoundError:
                try:
                    fd = os.open(name, os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                                 | os.O_CLOEXEC, 0o644, dir_fd=self.fd)
                except FileExistsError:
                    continue  # another writer made it first: use theirs
                self._give(fd)
                return fd
            except OSError as err:
                if err.errno not in (errno.ELOOP, errno.ENXIO, errno.EACCES):
                    raise
                self.remove(name)
                continue
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and (self.owner is None
                                                or info.st_uid == self.owner[0]):
                return fd
            os.close(fd)
            self.remove(name)
        raise Unsafe(errno.EAGAIN, f"{self.where(name)}: keeps being replaced: no lock")

    def rename(self, old: str, new: str) -> None:
        """Within this directory only; a link at either name is moved, never followed."""
        _check_name(old)
        _check_name(new)
        os.rename(old, new, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def remove(self, name: str) -> None:
        """Gone, whatever it was (a directory the agent put there is moved aside)."""
        _check_name(name)
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            self.rename(name, f".{name}.unsafe.{os.urandom(4).hex()}")

    def mtime_ns(self, name: str) -> int | None:
        """When ``name`` itself (not what a link names) last changed; None if missing."""
        _check_name(name)
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_mtime_ns
        except FileNotFoundError:
            return None

    def _new(self, name: str, mode: int) -> tuple[str, int]:
        _check_name(name)
        tmp = f".{name}.{os.urandom(8).hex()}"
        fd = os.open(tmp, NEW, 0o600, dir_fd=self.fd)
        try:
            self._give(fd)
            os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            self.remove(tmp)
            raise
        return tmp, fd

    def _give(self, fd: int) -> None:
        """What root made here is the owner's (an unprivileged writer's is its own)."""
        if self.owner is not None and os.geteuid() == 0:
            _fchown(fd, self.owner)


def read_regular(path: str, limit: int, *,
                 whole: bool = False) -> tuple[bytes, os.stat_result]:
    """A file wherever ``path`` leads (links followed: a hook file may be one), with its
    status: never a FIFO, device or directory (opened non-blocking, checked with fstat on
    the open file, so no swap can slip in between), never more than ``limit`` bytes (with
    ``whole``, a longer file is Unsafe instead of cut)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unsafe(errno.EINVAL, f"{path}: not a regular file: not read")
        return _read_limited(fd, limit, path, whole=whole), info
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


_refused: list[str] = []  # what could not be given to its owner (no CAP_CHOWN)


def refused_chowns() -> list[str]:
    """What root made for the agent but could not give it, since the last call (so that
    the caller says it once: the agent's service may not write there)."""
    found = list(_refused)
    _refused.clear()
    return found


def _fchown(fd: int, owner: Owner) -> None:
    """Give what root just made to its owner; without CAP_CHOWN (--cap-drop CHOWN) it stays
    root's, readable by all: the agent's own writes there fail, said once by the caller."""
    try:
        os.fchown(fd, *owner)
    except PermissionError:
        if not _refused:
            _refused.append(os.readlink(f"/proc/self/fd/{fd}"))


def _read_limited(fd: int, limit: int, where: str, whole: bool = True) -> bytes:
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
        _fchown(fd, owner)  # made just now (a home that useradd did not create)
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
        _fchown(fd, owner)  # ours, just made (the uid check: not a swapped-in one)
    return fd


def _check_name(name: str) -> None:
    if not name or "/" in name or name in (".", "..") or "\0" in name:
        raise ValueError(f"not a plain file name: {name!r}")
