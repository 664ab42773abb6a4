"""The guard snapshot: what the agent's hook files held before its first instruction
(ARCHITECTURE.md, invariant 15), kept as the outcome of each read the hook formats'
loaders make (hooks/workspacefiles.py replays them), so that loading from it is loading
from the files as they were.

It is taken as the agent, by a reader that follows links as the hook service always has
(events/guardset.py), written to a memory file root made, and sealed by root before the
agent starts: nothing can change it afterwards, and every start of the hook service
gets the same one (a service the agent kills comes back with the guards it had). Root
passes it on and never reads it: the bytes are the agent's files'.

Its form is JSON, versioned: ``files`` maps a path to what reading it gave (its bytes in
base64 and its status, or the error: errno, text, and whether it was agentfs's Unsafe),
with the limit it was read under; ``lists`` maps a directory to its first names in order
and how many more there were, or the error. ``failed`` says why nothing could be taken:
then every path it covers reads as that error (a guard among them blocks: invariant 12).
"""

from __future__ import annotations

import base64
import errno
import json
import os
from typing import TYPE_CHECKING

from initd.state.agentfs import Unsafe

if TYPE_CHECKING:  # (the reader, a process of its own, imports this: typing costs it)
    from collections.abc import Callable, Mapping
    from typing import Any

VERSION = 1
BUDGET = 32 * 2**20  # bytes of the agent's files one snapshot keeps; past it: errors
LIMIT = 2 * BUDGET + 2**20  # its encoded size (base64, names, status): more is not one


class Snapshot:
    def __init__(self, covered: tuple[str, ...] = (), failed: str | None = None) -> None:
        self.files: dict[str, dict[str, Any]] = {}
        self.lists: dict[str, dict[str, Any]] = {}
        self.failed = failed
        self.covered = frozenset(covered)  # what a failed one stands in for
        self.kept = 0
        self.hashed = 0  # bytes hashed for digests (guardset's budget)

    # --- taking it

    def record_read(self, path: str, limit: int, whole: bool,
                    read: Callable[..., tuple[Any, ...]]) -> str | None:
        """What ``read(path, limit, whole=whole)`` gives, kept (its bytes within the
        budget): (bytes, status), or a hook's (bytes, status, the path that runs), whose
        last is returned (None: no path, an error)."""
        shape: dict[str, Any] = {"limit": limit, "whole": whole}
        if self.kept + limit > BUDGET:  # (before reading: the budget bounds memory too;
            # an error that is no Unsafe: the loaders take it for a file they could not
            # read, whose hook stands in as an error on every blockable event)
            self.files[path] = {**shape, **_error(OSError(errno.EFBIG, (
                f"not read: the guard snapshot holds at most {BUDGET} bytes of heads and "
                "configs")))}
            return None
        try:
            data, info, *runs = read(path, limit, whole=whole)
        except OSError as err:
            self.files[path] = {**shape, **_error(err)}
            return None
        self.kept += len(data)
        self.files[path] = {**shape, "data": base64.b64encode(data).decode(),
                            "stat": [*info, *(getattr(info, f"st_{t}time{n}")
                                              for n in ("", "_ns") for t in "amc")],
                            "runs": runs[0] if runs else path}
        return str(runs[0]) if runs else path

    def record_digest(self, paths: tuple[str, ...], digest: str) -> None:
        """A script's whole hash (``digest:HEX``, or why there is none), kept beside the
        reads of ``paths`` (a hook, and the file its link names)."""
        for path in paths:
            if path in self.files:
                self.files[path]["digest"] = digest

    def digest(self, path: str) -> str | None:
        """The hash ``record_digest`` kept for ``path``; None when none was."""
        found = self.files.get(path, {}).get("digest")
        return found if isinstance(found, str) else None

    def record_names(self, directory: str,
                     names: Callable[[str], tuple[list[str], int]]) -> None:
        try:
            first, more = names(directory)
        except OSError as err:
            self.lists[directory] = _error(err)
            return
        self.lists[directory] = {"names": first, "more": more}

    # --- replaying it

    def covers(self, path: str) -> bool:
        """Whether reading ``path`` is answered from here (else it is read as it is)."""
        return path in self.files or path in self.lists or path in self.covered

    def read(self, path: str, limit: int, whole: bool,
             kinds: Mapping[str, Callable[[str, str], OSError]] | None = None
             ) -> tuple[bytes, os.stat_result]:
        """The read of ``path`` as it was: its bytes and status, or its error raised
        again (``kinds``: the classes of the errors a caller's reads raise, by name)."""
        data, info, _ = self.read_hook(path, limit, whole, kinds)
        return data, info

    def read_hook(self, path: str, limit: int, whole: bool = False,
                  kinds: Mapping[str, Callable[[str, str], OSError]] | None = None
                  ) -> tuple[bytes, os.stat_result, str]:
        """``read``'s, and the path that runs (a hook's, resolved from a link)."""
        kept = self._kept(self.files, path)
        if (kept.get("limit"), kept.get("whole")) != (limit, whole):  # never: one table
            raise Unsafe(errno.EIO, f"{path}: not read as the guard snapshot read it")
        if "data" not in kept:
            kind = (kinds or {}).get(str(kept.get("kind")))
            raise kind(path, str(kept["text"])) if kind is not None else _raised(path, kept)
        return (base64.b64decode(kept["data"]), os.stat_result(kept["stat"]),
                str(kept.get("runs", path)))

    def names(self, directory: str) -> tuple[list[str], int]:
        kept = self._kept(self.lists, directory)
        if "names" not in kept:
            raise _raised(directory, kept)
        return list(kept["names"]), int(kept["more"])

    def _kept(self, where: dict[str, dict[str, Any]], path: str) -> dict[str, Any]:
        if self.failed is not None:
            raise Unsafe(errno.EIO, f"{path}: {self.failed}")
        kept = where.get(path)
        if kept is None:  # (covered, never read: it was not there)
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        return kept

    def stamp(self, path: str) -> tuple[int, int, int] | None:
        """(mtime_ns, size, inode) of a file as it was taken; None: not there then."""
        kept = self.files.get(path)
        if kept is None or "stat" not in kept:
            return None
        info = os.stat_result(kept["stat"])
        return info.st_mtime_ns, info.st_size, info.st_ino

    # --- its form

    def encode(self) -> bytes:
        return json.dumps({"version": VERSION, "failed": self.failed,
                           "covered": sorted(self.covered), "files": self.files,
                           "lists": self.lists}, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, raw: bytes) -> Snapshot:
        """A snapshot from its bytes; one that is not (another version, not JSON, not
        whole) is a failed one, whose reason says so."""
        try:
            data = json.loads(raw)
            if not isinstance(data, dict) or data.get("version") != VERSION:
                raise ValueError(f"not a version {VERSION} snapshot")
            taken = cls(tuple(data["covered"]), data["failed"])
            taken.files, taken.lists = dict(data["files"]), dict(data["lists"])
        except (ValueError, KeyError, TypeError, RecursionError) as err:
            return cls(failed=f"the guard snapshot is unreadable ({err})")
        return taken


def _error(err: OSError) -> dict[str, Any]:
    """An error kept: its errno, its words (a refusal's ``why``), whether it was Unsafe,
    and its class's name (a caller's own: workspacefiles.Linked)."""
    return {"errno": err.errno or errno.EIO, "text": str(getattr(err, "why", err.strerror)),
            "unsafe": isinstance(err, Unsafe), "kind": type(err).__name__}


def _raised(path: str, kept: dict[str, Any]) -> OSError:
    """The error reading ``path`` gave when the snapshot was taken, raised again: the
    same type (Unsafe, or the OSError its errno makes: FileNotFoundError…)."""
    if kept.get("unsafe"):
        return Unsafe(int(kept["errno"]), str(kept["text"]))
    return OSError(int(kept["errno"]), str(kept["text"]), path)


# --- the memory file root hands on


def memory_file() -> int:
    """An empty memory file that can be sealed (close-on-exec: passed on by name)."""
    return os.memfd_create("initd-guards", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)


def write(fd: int, raw: bytes) -> None:
    view = memoryview(raw)
    while view:
        view = view[os.write(fd, view):]


def made(raw: bytes) -> int:
    """A sealed memory file holding ``raw``: no process can change it from now on."""
    fd = memory_file()
    try:
        write(fd, raw)
        seal(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def seal(fd: int) -> None:
    import fcntl

    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK
                | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)


def load(fd: int) -> Snapshot:
    """The snapshot in the memory file ``fd`` (read from its start, whoever else has
    it open); a file that is not sealed, or not one, is a failed snapshot."""
    import fcntl

    try:
        seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
        if not seals & fcntl.F_SEAL_WRITE:
            return Snapshot(failed="the guard snapshot was not sealed")
        size = os.fstat(fd).st_size
        if size > LIMIT:
            return Snapshot(failed=f"the guard snapshot is over {LIMIT} bytes")
        chunks, at = [], 0
        while at < size:
            chunk = os.pread(fd, size - at, at)
            if not chunk:
                break
            chunks.append(chunk)
            at += len(chunk)
    except OSError as err:
        return Snapshot(failed=f"the guard snapshot cannot be read ({err.strerror})")
    return Snapshot.decode(b"".join(chunks))
