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

A file of the workspace's hooks directory is read by ``read_hook``, alike in every
context: there a symbolic link (``ln -s ../../scripts/lint.sh .discobot/hooks/``) is a
hook when it names a regular file of the workspace, of the link's owner, with no other
link on the way; initd resolves it by name, never the kernel, and the file it names is
what is read, approved and run. Any other link there is refused (``Linked``), with what
to do instead.

Within ``replaying`` (the hook service loading the session's guards), a path the guard
snapshot covers is not read at all: the snapshot answers as the file did when it was
taken, before the agent's first instruction (state/snapshot.py, invariant 15).
"""

from __future__ import annotations

import errno
import heapq
import itertools
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple

from initd.errors import shown
from initd.state import agentfs
from initd.state.agentfs import LINKS, Owner, Place, Unsafe

if TYPE_CHECKING:
    from initd.state.snapshot import Snapshot


class Tree(NamedTuple):
    base: str  # trusted as named: the workspace as configured, the home passwd gives
    owner: Owner  # whose files are read there (anyone else's are refused)


class Refused(Unsafe):
    """A file ``guard`` will not read. Its message names it; ``why`` says why, without
    its path (it may name a directory on the way)."""

    def __init__(self, path: str, why: str, link: bool = False) -> None:
        super().__init__(errno.EPERM, why if why.startswith(f"{path} ") else f"{path}: {why}")
        self.path = path
        self.why = why
        self.link = link  # refused because it is a symbolic link itself


class Linked(Refused):
    """A hook file that is a symbolic link initd does not resolve to a hook: ``why`` says
    why, and what to do instead."""


MAX_NAMES = 1000  # of a hooks directory's names, in order, read as hooks (discovery.py)
SCAN_LIMIT = 100_000  # names listed to find those (a directory the agent filled: bounded)
_trees: list[Tree] = []
_refused: dict[str, str] = {}  # path -> the line that names it, in the order found
_replayed = threading.local()  # (replaying: the one in force in this thread, if any)


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
    """Within, in this thread: what ``snapshot`` covers is answered from it, as it was
    when taken. The service loads in several threads at once: one thread's end of it
    must neither end another's nor leave it in force for the reads of the files as they
    are now (guardset.changed's)."""
    kept = getattr(_replayed, "snapshot", None)
    _replayed.snapshot = snapshot
    try:
        yield
    finally:
        _replayed.snapshot = kept


def _snapshot(path: str) -> Snapshot | None:
    snapshot: Snapshot | None = getattr(_replayed, "snapshot", None)
    return snapshot if snapshot is not None and snapshot.covers(path) else None


def refusals() -> list[str]:
    """The lines naming each file refused since the last call (each once)."""
    found = list(_refused.values())
    _refused.clear()
    return found


def guarded(path: str) -> bool:
    return _where(path) is not None


def read(path: str, limit: int, *, whole: bool = False,
         follow: bool = True) -> tuple[bytes, os.stat_result]:
    """``path``'s bytes (at most ``limit``; with ``whole``, a longer file is refused) and
    its status. FileNotFoundError when there is none; Unsafe (Refused, under ``guard``)
    when it is not a regular file of the tree's owner (or root's, with one name), too
    big, or reached by a link (outside ``guard`` only without ``follow``, at its end)."""
    snapshot = _snapshot(path)
    if snapshot is not None:
        return snapshot.read(path, limit, whole)
    where = _where(path)
    if where is None:
        return agentfs.read_regular(path, limit, whole=whole, follow=follow)
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


def read_hook(path: str, limit: int, base: str) -> tuple[bytes, os.stat_result, str]:
    """A file of a hooks directory under ``base`` (the workspace) as the hook it is: its
    first ``limit`` bytes, its status, and the path that runs. A file is read as ``read``
    reads one, never through a link at its end. A symbolic link is resolved by initd,
    never by the kernel: what it says is read from its directory (walked to from
    ``base``), taken from there by name, and must stay in ``base``; the file it names is
    walked to from ``base`` one component at a time with O_NOFOLLOW and read only when it
    is a regular file of the link's owner (or root's with one name): that file's path is
    what runs. Linked when the link is refused; Unsafe when it names no regular file."""
    snapshot = _snapshot(path)
    if snapshot is not None:
        return snapshot.read_hook(path, limit, kinds={"Linked": Linked, "Refused": Refused})
    try:
        return (*read(path, limit, follow=False), path)
    except Unsafe as err:
        if not (getattr(err, "link", False) or err.errno == errno.ELOOP):
            raise
    _refused.pop(path, None)  # (not refused yet: what it names is read, or it is)
    try:
        return _resolve(path, limit, base)
    except Linked as err:
        if guarded(path):  # a person's verb names it (hooks trust: "refused ...")
            _refused.setdefault(path, str(err))
        raise


def _resolve(path: str, limit: int, base: str) -> tuple[bytes, os.stat_result, str]:
    """read_hook's, for a link: what it names, read, and that file's path."""
    directory, name = os.path.split(path)
    try:
        with Place(base, _parts(os.path.relpath(directory, base))).open() as at:
            text, owner = at.readlink(name)
    except (OSError, ValueError) as err:  # (ValueError: not a directory under ``base``)
        why = err.strerror if isinstance(err, OSError) else err
        raise Linked(path, f"a symbolic link initd could not read ({why})") from None
    target = os.path.normpath(os.path.join(directory, text))
    inside = os.path.relpath(target, base)
    if inside in (".", "..") or inside.startswith(("../", "/")):
        raise Linked(path, f"a symbolic link to {shown(text)}, outside the workspace: not "
                     "followed (copy the file here, or write a hook here that runs it)")
    head, info = _linked(path, text, base, inside, limit)
    if info.st_uid != owner or (info.st_uid == 0 and info.st_nlink > 1):
        raise Linked(path, f"a symbolic link to {shown(text)}, a file of uid {info.st_uid} "
                     f"{'with more than one name ' if info.st_uid == owner else ''}while the "
                     f"link is uid {owner}'s: not read")
    where = _where(target)
    if where is not None:
        try:
            _judge(target, info, where[0])
        except Unsafe as err:
            raise _refuse(path, err) from None
    return head, info, target


def _linked(path: str, text: str, base: str, inside: str,
            limit: int) -> tuple[bytes, os.stat_result]:
    """What a link of a hooks directory names (``inside`` the workspace, ``base``), read."""
    *way, last = inside.split(os.sep)
    about = f"a symbolic link to {shown(text)}"
    try:
        with Place(base, tuple(way)).open() as at:
            found = at.read_status(last, limit, anyone=True, whole=False)
    except FileNotFoundError:
        found = None
    except Unsafe as err:
        if err.errno in LINKS:
            raise Linked(path, f"{about}, which is a link itself or has one on the way: "
                         "initd follows one link, to a file of the workspace (link to the "
                         "file itself, or copy it here)") from None
        if err.errno == errno.EINVAL:
            raise Unsafe(errno.EINVAL, f"{path}: {about}, not a regular file") from None
        raise Linked(path, f"{about}, which cannot be read ({err})") from None
    if found is None:
        raise Linked(path, f"{about}, which does not exist (a dangling link: point it at "
                     "the hook's file, or remove it)")
    return found


def _parts(rel: str) -> tuple[str, ...]:
    return () if rel == "." else tuple(rel.split(os.sep))


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
    counted = itertools.count()  # (one a name listed: zip takes it after each)
    with scandir(directory) as entries:  # (a verb's guard: no link)
        listed = zip(itertools.islice(entries, scan), counted, strict=False)
        first = heapq.nsmallest(keep, (entry.name for entry, _ in listed))
    return first, next(counted) - len(first)


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
    refused = Refused(path, why, link=err.errno == errno.ELOOP
                      and text.endswith(": a symbolic link: not read"))
    _refused.setdefault(path, str(refused))
    return refused
