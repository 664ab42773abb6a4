"""The hook files as a person's verb reads them (``initd hooks trust``; ``list``, ``check``
and ``run`` as root): through agentfs, from the workspace (or the agent's home) down.

What root reads there reaches what it prints and what it approves, and the agent may have
planted, anywhere in those trees (``.claude/settings.json``, ``.discobot/hooks`` or a
script in it, ``.devcontainer``…), a link to a root file, a FIFO, a huge file, or a hard
link to a root file (on a host with ``fs.protected_hardlinks=0``). So within ``guard``, a
path under a guarded tree is walked to from the tree's base one component at a time with
O_NOFOLLOW, and read only if it is a regular file of the tree's owner (or root's, with no
other name: not a hard link to one elsewhere), opened non-blocking, within its limit. No
link is followed, not even one to a file inside the workspace: what a link names can
change between the reading and the running, and a person approves a file, not a name.
Each file refused is remembered, to be named once.

Outside ``guard`` (boot, the hook service as the agent) a file is read as it always was:
wherever its path leads, never a FIFO, never past its limit.

Within ``replaying`` (the hook service loading the session's guards), a path the guard
snapshot covers is not read at all: the snapshot answers as the file did when it was
taken, before the agent's first instruction (state/snapshot.py, invariant 15).
"""

from __future__ import annotations

import errno
import heapq
import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from initd.state import agentfs
from initd.state.agentfs import Owner, Place, Unsafe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from initd.state.snapshot import Snapshot


class Tree(NamedTuple):
    base: str  # trusted as named: the workspace as configured, the home passwd gives
    owner: Owner  # whose files are read there (anyone else's are refused)


class Refused(Unsafe):
    """A file ``guard`` will not read. Its message names it; ``why`` says why, without
    its path (it may name a directory on the way)."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(errno.EPERM, why if why.startswith(f"{path} ") else f"{path}: {why}")
        self.path = path
        self.why = why


MAX_NAMES = 1000  # of a hooks directory's names, in order, read as hooks (discovery.py)
SCAN_LIMIT = 100_000  # names listed to find those (a directory the agent filled: bounded)
_trees: list[Tree] = []
_refused: dict[str, str] = {}  # path -> the line that names it, in the order found
_replayed: list[Snapshot] = []  # (replaying: the one in force, if any)


def tree(base: str) -> Tree:
    """The tree at ``base``, owned by whoever owns its directory (fstat on it, open)."""
    with Place(base).open() as top:
        info = os.fstat(top.fd)
    return Tree(base, (info.st_uid, info.st_gid))


@contextmanager
def guard(*trees: Tree) -> Iterator[None]:
    """Within: every read of a path under one of ``trees`` goes through the door."""
    kept = list(_trees)
    _trees[:] = sorted(trees, key=lambda t: len(t.base), reverse=True)  # the closest first
    try:
        yield
    finally:
        _trees[:] = kept


@contextmanager
def replaying(snapshot: Snapshot) -> Iterator[None]:
    """Within: what ``snapshot`` covers is answered from it, as it was when taken."""
    kept = list(_replayed)
    _replayed[:] = [snapshot]
    try:
        yield
    finally:
        _replayed[:] = kept


def _snapshot(path: str) -> Snapshot | None:
    return _replayed[0] if _replayed and _replayed[0].covers(path) else None


def refusals() -> list[str]:
    """The lines naming each file refused since the last call (each once)."""
    found = list(_refused.values())
    _refused.clear()
    return found


def guarded(path: str) -> bool:
    return _where(path) is not None


def read(path: str, limit: int, *, whole: bool = False) -> tuple[bytes, os.stat_result]:
    """``path``'s bytes (at most ``limit``; with ``whole``, a longer file is refused) and
    its status. FileNotFoundError when there is none; Unsafe (Refused, under ``guard``)
    when it is not a regular file of the tree's owner (or root's, with one name), too
    big, or reached by a link."""
    snapshot = _snapshot(path)
    if snapshot is not None:
        return snapshot.read(path, limit, whole)
    where = _where(path)
    if where is None:
        return agentfs.read_regular(path, limit, whole=whole)
    owned, parts = where
    try:
        with Place(owned.base, parts[:-1], owned.owner).open() as directory:
            found = directory.read_status(parts[-1], limit, anyone=True, whole=whole)
        if found is None:
            raise FileNotFoundError(errno.ENOENT, f"{path}: no such file", path)
        _judge(path, found[1], owned)  # on the open file's status: no swap in between
    except Unsafe as err:
        raise _refuse(path, err) from None
    return found


def _judge(path: str, info: os.stat_result, owned: Tree) -> None:
    """The tree owner's file, or root's own: one root put there (a workspace cloned as
    root), whose only name is this one. A root file with more names is a hard link to
    one elsewhere (/etc/shadow, a secret), which the agent may make on a host with
    fs.protected_hardlinks=0: refused, like any other user's file."""
    if info.st_uid == owned.owner[0] or (info.st_uid == 0 and info.st_nlink == 1):
        return
    more = f" and has {info.st_nlink} names" if info.st_uid == 0 else ""
    raise Unsafe(errno.EPERM, f"{path}: belongs to uid {info.st_uid}{more}, not to uid "
                              f"{owned.owner[0]}: not read")


def names(directory: str, keep: int, scan: int) -> tuple[list[str], int]:
    """The first ``keep`` names of ``directory`` in name order, and how many more there
    are (0: none), of at most ``scan`` listed: memory bounded by ``keep`` (the smallest
    names so far are kept while the rest are listed), time by ``scan`` (names past it are
    not listed: the count then says "or more", and the order is that of those listed)."""
    snapshot = _snapshot(directory)
    if snapshot is not None:
        return snapshot.names(directory)
    listed = 0

    def counted(entries: Iterator[os.DirEntry[str]]) -> Iterator[str]:
        nonlocal listed
        for entry in itertools.islice(entries, scan):
            listed += 1
            yield entry.name

    with scandir(directory) as entries:  # (a verb's guard: no link)
        first = heapq.nsmallest(keep, counted(entries))
    return first, listed - len(first)


@contextmanager
def scandir(directory: str) -> Iterator[Iterator[os.DirEntry[str]]]:
    """``os.scandir``; under ``guard``, of the directory reached without following a link
    (a hooks directory that is a link to a root directory is not listed)."""
    where = _where(directory)
    if where is None:
        with os.scandir(directory) as entries:
            yield entries
        return
    owned, parts = where
    try:
        with Place(owned.base, parts, owned.owner).open() as opened:
            listing = os.scandir(opened.fd)  # (on a copy of the descriptor)
    except Unsafe as err:
        raise _refuse(directory, err) from None
    with listing as entries:
        yield entries


def _where(path: str) -> tuple[Tree, tuple[str, ...]] | None:
    """The guarded tree ``path`` is in, and the names down to it from its base."""
    for owned in _trees:
        rel = os.path.relpath(os.path.normpath(path), owned.base)
        if rel != "." and rel != ".." and not rel.startswith(("../", "/")):
            return owned, tuple(rel.split(os.sep))
    return None


def _refuse(path: str, err: Unsafe) -> Refused:
    text = str(err)
    if err.errno == errno.ELOOP and text.endswith(": a symbolic link: not read"):
        why = ("a symbolic link: not read (root follows no link in the agent's files, not "
               "even one to a file beside it)")
    elif err.errno == errno.EPERM and "belongs to uid" in text:
        why = (text.removeprefix(f"{path}: ") + " (only the tree owner's files are read, and "
               "root's with one name: a hard link to another's file is not theirs to show)")
    else:  # a FIFO, too big; or a directory on the way that is a link (named)
        why = text.removeprefix(f"{path}: ")
    refused = Refused(path, why)
    _refused.setdefault(path, str(refused))
    return refused
