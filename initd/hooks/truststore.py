"""The trust store: the hooks a person approved, as hashes only.

``{"version": 2, "trusted": {KEY: {"digest": SHA256, "at": WHEN}}}``: a KEY is a script's
path or ``file#key`` for a hook in a config file; the digest is the sha256 of exactly what
is judged (hooks/trust.py, events/trust.py). Never a command or a file's content: the
store outlives the workspace and is read by whoever may read it, and what the agent put
in its files (or managed to have root read) must not be published there.

It is root's file (``/var/lib/initd/trust.json``; ``--trust-file``): mode 0600, in a
directory made 0700 when missing, written to a temp file in the same directory, fsynced
and renamed, under a lock. Whoever could write it could approve hooks, so a store that is
a link, not a regular file, not the caller's (root's), or writable by group or others
(or in a directory someone else may write) is refused, never read or written.

Version 1 also kept a label per hook: its command, for a config hook. Its digests are the
same hashes of the same text, so reading it keeps every approval and drops the labels;
an entry without a valid digest is dropped, and said (it must be approved again).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from typing import Any, NamedTuple

from initd.state import statefile
from initd.state.agentfs import Dir, Place, Unsafe

VERSION = 2
LIMIT = 16 * 2**20  # a few hundred bytes a hook
LOCK_WAIT = 10.0  # seconds: only a person's `initd hooks trust` holds it, briefly
DIGEST = re.compile(r"[0-9a-f]{64}")
KEY_LIMIT = 8192  # a hook's key: a path (PATH_MAX is 4096) and where in its file


def well_formed(key: object, digest: object) -> bool:
    """A question about one approval, as the agent's side may ask it (the channel's
    ``trust`` op, ``POST /v1/trust``): a key of bounded text and a sha256 in hex."""
    return isinstance(key, str) and 0 < len(key) <= KEY_LIMIT and isinstance(digest, str) \
        and DIGEST.fullmatch(digest) is not None


class Refused(Exception):
    """The store is not one root may trust: the message is the one line saying why."""


class Recorded(NamedTuple):
    trusted: dict[str, dict[str, Any]]  # key -> {"digest", "at"}
    notes: tuple[str, ...] = ()  # what reading an older store changed


class Store:
    def __init__(self, path: str) -> None:
        self.path = path
        self.directory, self.name = os.path.split(os.path.abspath(path))
        self.owner = (os.geteuid(), os.getegid())

    def read(self) -> Recorded:
        """What is recorded (nothing when there is no store). Refused, or an OSError
        (not allowed to read it: root's 0700 directory, for anyone else)."""
        try:
            with self._open() as directory:
                return self._read(directory)
        except FileNotFoundError:
            return Recorded({})

    def update(self, change: Callable[[dict[str, dict[str, Any]]], None]) -> Recorded:
        """Read, ``change`` the approvals in place, write: under the lock, atomically."""
        with self._open(create=True) as directory:
            fd = directory.lock(f".{self.name}.lock")
            try:
                _lock(fd, self.path)
                found = self._read(directory)
                change(found.trusted)
                data = {"version": VERSION, "trusted": found.trusted}
                directory.write(self.name, (json.dumps(data, sort_keys=True) + "\n").encode(),
                                mode=0o600)
                return found
            finally:
                os.close(fd)  # closing drops the lock

    def _open(self, create: bool = False) -> Dir:
        try:
            directory = Place(self.directory, owner=self.owner).open()
        except FileNotFoundError:
            if not create:
                raise
            parent, name = os.path.split(self.directory)
            with Place(parent, owner=self.owner).open(create=True) as above:
                try:
                    above.mkdir(name, 0o700)  # approvals are root's alone
                except FileExistsError:
                    pass  # made meanwhile: checked below like any other
            directory = Place(self.directory, owner=self.owner).open()
        info = os.fstat(directory.fd)
        problem = _loose(info, "its directory", sticky_ok=True)
        if problem is not None:
            directory.close()
            raise Refused(f"trust store {self.path}: {problem}")
        return directory

    def _read(self, directory: Dir) -> Recorded:
        try:
            info = os.stat(self.name, dir_fd=directory.fd, follow_symlinks=False)
        except FileNotFoundError:
            return Recorded({})
        problem = ("a symbolic link" if stat.S_ISLNK(info.st_mode) else
                   "not a regular file" if not stat.S_ISREG(info.st_mode) else
                   _loose(info, "it"))
        try:
            # Rechecked on the open file (a regular one, never a FIFO); anyone's, as the
            # name was root's: nobody else may swap it (its directory was checked).
            raw = None if problem else directory.read(self.name, LIMIT, anyone=True)
        except Unsafe as err:
            problem = str(err).removeprefix(f"{directory.where(self.name)}: ")
        if problem is not None:
            raise Refused(f"trust store {self.path}: {problem}: refused (whoever can change "
                          "it can approve hooks: it must be a 0600 file of root's)")
        return _parse(raw or b"{}", self.path)


def _loose(info: os.stat_result, what: str, sticky_ok: bool = False) -> str | None:
    """Why someone else could change this, or None."""
    if info.st_uid not in (0, os.geteuid()):
        return f"{what} belongs to uid {info.st_uid}, not to root"
    if info.st_mode & 0o022 and not (sticky_ok and info.st_mode & stat.S_ISVTX):
        return f"{what} is writable by group or others (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def _parse(raw: bytes, path: str) -> Recorded:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        data = None
    version = data.get("version", 1) if isinstance(data, dict) else None
    if version not in (1, VERSION) or not isinstance(data, dict):
        raise Refused(f"trust store {path}: not a trust store of this initd (version "
                      f"{version!r}): refused; move it aside to approve anew")
    trusted: dict[str, dict[str, Any]] = {}
    lost = labels = 0
    entries = data.get("trusted")
    for key, seen in (entries.items() if isinstance(entries, dict) else ()):
        digest = seen.get("digest") if isinstance(seen, dict) else None
        if not (isinstance(digest, str) and DIGEST.fullmatch(digest)):
            lost += 1
            continue
        at = seen.get("at")
        trusted[key] = {"digest": digest, "at": at if isinstance(at, str) else None}
        labels += "label" in seen
    notes = []
    if labels:
        notes.append(f"{path}: {labels} approval(s) kept as hashes only; the commands an "
                     "older initd kept with them are gone from it")
    if lost:
        notes.append(f"{path}: {lost} old approval(s) had no valid hash and are dropped: "
                     "approve those hooks again (initd hooks trust)")
    return Recorded(trusted, tuple(notes))


def _lock(fd: int, path: str) -> None:
    statefile.lock(fd, LOCK_WAIT, lambda why: f"{path}: another `initd hooks trust` holds "
                   f"its lock ({why}): nothing approved")
