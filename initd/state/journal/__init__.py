"""Exactly once across a restart: a journal of what each request (an event, a turn) ran.

A client that may send a request again (its connection died with the hook service)
names it with a key, the HTTP ``Idempotency-Key``; ``initd emit`` and ``initd turn``
always do, and send again with the same key. Each key has one file in the session's
``journal/`` directory, and every step of the request is a line there, written before
the step goes on (a kill -9 loses none: they are in the kernel's page cache), as
journal/entry.py says; what is stored is capped, so that a journal is always read back
whole (ibid.).

A repeat of a request that was answered gets the same answer and runs nothing; one that
arrives while the first still runs here is refused at once (InFlight, the API's 409). Else
each step recorded gives its recorded outcome again, and a step *fired but never
recorded* (the service was killed while the hook ran, or before its result was kept) is
never run a second time: it is reported as interrupted (an error that blocks a blockable
event: what the guard said is not known). Steps never fired run now. So a hook runs at
most once per request, and its result is reported at least once.

The directory is the agent's, written by the service as the agent: the agent can forge
this (and could as well not send the event). Root never reads it. What is read is size
limited and parsed line by line; a line that is not ours is skipped, and a journal that
cannot be read or written is said once and the requests still run (at least once): its
``trouble`` says so in the health until a request is journaled whole again, and each
answer says ``journaled: false``.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from initd.state.agentfs import Dir, Place, Unsafe
from initd.state.journal.entry import (
    DROPPED,
    FULL,
    LINE_LIMIT,
    LOST,
    READ_LIMIT,
    SMALL,
    Entry,
    KeyReused,
    Unkept,
    once,
)

__all__ = ["DROPPED", "FULL", "LINE_LIMIT", "LOST", "READ_LIMIT", "SMALL", "Entry",
           "InFlight", "Journal", "KeyReused", "Unkept", "once"]

KEEP = 512  # requests' journals kept; the oldest go (a repeat comes within seconds)
PROBE = ".probe"  # written and removed at the start: can the journal be written?


class InFlight(Exception):
    """The key of a request that is still being processed here (the API's 409)."""


class Journal:
    """The journals of one session's requests, in ``place`` (never through a link)."""

    def __init__(self, place: Place, warn: Any = None) -> None:
        self.place = place
        self.warn = warn  # (message, **fields) -> None; said once per problem
        self._said: set[str] = set()
        self._locks: dict[str, list[Any]] = {}  # name: [lock, users]
        self._guard = threading.Lock()
        self._new = 0
        self.trouble: str | None = None  # why requests are not journaled now (the health's)

    @staticmethod
    def file_name(kind: str, key: str) -> str:
        return f"{kind}-{hashlib.sha256(key.encode()).hexdigest()[:40]}.jsonl"

    @contextmanager
    def entry(self, kind: str, key: str | None, body: str | None = None
              ) -> Iterator[Entry | None]:
        """The request's entry, held for its whole run. None without a key, or when the
        journal cannot be used (said, and the health's trouble): the request runs all the
        same. ``body`` (idempotency.digest) must be the first delivery's: else KeyReused. A repeat
        that arrives while the first still runs here is InFlight: it is never run beside
        it, and it does not wait (a hook may run for hours)."""
        if key is None:
            yield None
            return
        name = self.file_name(kind, key)
        with self._guard:
            held = self._locks.setdefault(name, [threading.Lock(), 0])
            held[1] += 1
        directory = None
        try:
            if not held[0].acquire(blocking=False):
                raise InFlight("Idempotency-Key: a request with this key is still being "
                               "processed; send it again once it is answered (the same "
                               "answer comes back)")
            try:
                try:
                    directory = self.place.open(create=True)
                    entry: Entry | None = Entry(self, directory, name,
                                                self._read(directory, name), body)
                except (OSError, ValueError) as err:
                    self.problem("request journal not used: a repeated request may run "
                                 "its hooks again", err)
                    entry = None
                yield entry
                if entry is not None and entry.written:
                    self.trouble = None  # journaled whole again
                if entry is not None and entry.delivery == 1:
                    self._new += 1
                    if self._new % 64 == 1:
                        self.prune()
            finally:
                held[0].release()
        finally:
            if directory is not None:
                directory.close()
            with self._guard:
                held[1] -= 1
                if not held[1]:
                    del self._locks[name]

    def check(self) -> None:
        """Can a line be written? Found at the start (the health says it at once), not
        when a request sent again runs its hooks twice."""
        try:
            with self.place.open(create=True) as directory:
                directory.append(PROBE, b"", 0o600)
                directory.remove(PROBE)
        except (OSError, ValueError) as err:
            self.problem("request journal not written: a repeated request may run its "
                         "hooks again", err)

    @staticmethod
    def _read(directory: Dir, name: str) -> bytes:
        try:
            return directory.read(name, READ_LIMIT, whole=False) or b""
        except Unsafe as err:
            raise ValueError(str(err)) from None

    def prune(self, keep: int = KEEP) -> None:
        """Only the newest ``keep`` journals stay."""
        try:
            with self.place.open() as directory:
                names = [n for n in os.listdir(directory.fd) if n.endswith(".jsonl")]
                if len(names) <= keep:
                    return
                dated = sorted((directory.mtime_ns(n) or 0, n) for n in names)
                for _, old in dated[: len(dated) - keep]:
                    directory.remove(old)
        except OSError as err:
            self.problem("old request journals not removed", err)

    def problem(self, message: str, err: Exception) -> None:
        self.trouble = f"{message} ({self.place.path}: {err})"
        if message not in self._said and self.warn is not None:
            self._said.add(message)
            self.warn(message, directory=self.place.path, error=str(err))
