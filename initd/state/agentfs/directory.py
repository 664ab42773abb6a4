"""An open directory of agentfs, and all that is done in it: every call relative to its
descriptor, a name in it never followed if a link, a file read only if a regular one of
the owner's, a file written only as a new one made here and renamed into place."""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

from initd.state.agentfs.common import (
    DIRECTORY,
    NEW,
    READ,
    Owner,
    Unsafe,
    check_name,
    fchown,
    lchown,
    read_limited,
)

if TYPE_CHECKING:
    from typing import BinaryIO


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
        found = self.read_status(name, limit, anyone=anyone, whole=whole)
        return None if found is None else found[0]

    def read_status(self, name: str, limit: int, *, anyone: bool = False,
                    whole: bool = True) -> tuple[bytes, os.stat_result] | None:
        """``read``, with the status of the file read (fstat on its open descriptor: for a
        caller that judges its owner or link count itself, with ``anyone``)."""
        check_name(name)
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
            return read_limited(fd, limit, self.where(name), whole), info
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

    def append(self, name: str, data: bytes, mode: int = 0o644, sync: bool = False) -> None:
        """``data`` at the end of ``name`` in one write (O_APPEND: lines of two writers
        never mix), made if missing; never through a link, never into someone else's.
        ``sync``: on the disk before this returns (fdatasync), for a journal."""
        check_name(name)
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
            if os.write(fd, data) != len(data):  # (a full disk takes a part: said, so that
                raise OSError(errno.ENOSPC, f"{self.where(name)}: written in part")  # the
            if sync:  # writer knows its line was cut short)
                os.fdatasync(fd)
        finally:
            os.close(fd)

    def mkdir(self, name: str, mode: int = 0o755) -> None:
        """A new directory ``name`` (FileExistsError when there is one), the owner's."""
        check_name(name)
        os.mkdir(name, mode, dir_fd=self.fd)
        if self.owner is not None and os.geteuid() == 0:
            fd = os.open(name, DIRECTORY, dir_fd=self.fd)  # a link swapped in: refused
            try:
                if os.fstat(fd).st_uid == 0:  # the one just made, not a swapped-in one
                    fchown(fd, self.owner)
            finally:
                os.close(fd)

    def symlink(self, target: str, name: str) -> None:
        """``name`` becomes a link to ``target``, the owner's (made aside, renamed into
        place). Root makes it in a staging directory of its own (0700) and gives it to the
        owner there, where nothing can be swapped for it: by name, here, the chown could
        reach whatever the owner renamed over the link meanwhile (a hard link to a file
        of root's)."""
        check_name(name)
        if self.owner is None or os.geteuid() != 0 or \
                self.owner == (os.geteuid(), os.getegid()):
            self._link_aside(target, name, self)
            return
        stage = f".{name}.{os.urandom(8).hex()}"
        os.mkdir(stage, 0o700, dir_fd=self.fd)
        try:
            with Dir(os.open(stage, DIRECTORY, dir_fd=self.fd), self.where(stage),
                     None) as staging:
                info = os.fstat(staging.fd)  # the one just made, not one swapped in
                if info.st_uid != os.geteuid() or info.st_mode & 0o077:
                    raise Unsafe(errno.EPERM, f"{self.where(stage)}: replaced while root "
                                              "made a link there: not used")
                self._link_aside(target, name, staging)
        finally:
            try:
                self.rmdir(stage)
            except OSError:
                pass  # (the owner put something else there: theirs to remove)

    def _link_aside(self, target: str, name: str, aside: Dir) -> None:
        """The link made in ``aside`` (this directory, or root's staging one in it, where
        it is given to the owner), then renamed to ``name`` here."""
        tmp = f".{name}.{os.urandom(8).hex()}"
        os.symlink(target, tmp, dir_fd=aside.fd)
        try:
            if aside is not self and self.owner is not None:
                lchown(aside.fd, tmp, self.owner, self.where(name))
            aside.move(tmp, self, name)
        except BaseException:
            aside.remove(tmp)
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
        self.move(old, self, new)

    def remove(self, name: str) -> None:
        """Gone, whatever it was (a directory the agent put there is moved aside)."""
        check_name(name)
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            self.rename(name, f".{name}.unsafe.{os.urandom(4).hex()}")

    def move(self, name: str, to: Dir, new: str) -> None:
        """``name`` here becomes ``new`` in ``to`` (another open directory of the same
        tree): a rename, so bytes, mode and owner stay; a link is moved, never followed."""
        check_name(name)
        check_name(new)
        os.rename(name, new, src_dir_fd=self.fd, dst_dir_fd=to.fd)

    def rmdir(self, name: str) -> None:
        """The empty directory ``name`` gone (a link there is refused, not followed)."""
        check_name(name)
        try:
            os.rmdir(name, dir_fd=self.fd)
        except FileNotFoundError:
            pass

    def names(self, limit: int) -> list[tuple[str, bool]]:
        """Each entry's name and whether it is a symbolic link (from the directory itself:
        nothing is followed or opened); Unsafe past ``limit`` entries, so that a directory
        of a million names costs root neither the time nor the memory to read it."""
        found: list[tuple[str, bool]] = []
        with os.scandir(self.fd) as entries:
            for entry in entries:
                if len(found) == limit:
                    raise Unsafe(errno.EFBIG, f"{self.path}: over {limit} entries: not read")
                found.append((entry.name, entry.is_symlink()))
        return found

    def readlink(self, name: str) -> tuple[str, int]:
        """What the symbolic link ``name`` says, and whose link it is (nothing followed);
        OSError (EINVAL) when ``name`` is no link."""
        check_name(name)
        owner = os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_uid
        return os.readlink(name, dir_fd=self.fd), owner

    def mtime_ns(self, name: str) -> int | None:
        """When ``name`` itself (not what a link names) last changed; None if missing."""
        check_name(name)
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_mtime_ns
        except FileNotFoundError:
            return None

    def _new(self, name: str, mode: int) -> tuple[str, int]:
        check_name(name)
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
            fchown(fd, self.owner)

