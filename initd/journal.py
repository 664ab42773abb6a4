"""Exactly once across a restart: a journal of what each request (an event, a turn) ran.

A client that may send a request again (its connection died with the hook service)
names it with a key, the HTTP ``Idempotency-Key``; ``initd emit`` and ``initd turn``
always do, and send again with the same key. Each key has one file in the session's
``journal/`` directory, and every step of the request is a line there, written before
the step goes on (a kill -9 loses none: they are in the kernel's page cache):

* ``{"delivery": N}``: the request arrived (N: 1, then 2 for a repeat, …);
* ``{"fired": STEP, "delivery": N}``: a hook is about to run (this one is also on the
  disk before it runs, so that not even a crash of the machine runs it twice);
* ``{"recorded": STEP, "delivery": N, "outcome": …}``: what came of it;
* ``{"answer": …}``: the answer the client was sent.

A repeat of a request that was answered gets the same answer and runs nothing. Else
each step recorded gives its recorded outcome again, and a step *fired but never
recorded* (the service was killed while the hook ran, or before its result was kept) is
never run a second time: it is reported as interrupted. Steps never fired run now. So
a hook runs at most once per request, and its result is reported at least once.

The directory is the agent's, written by the service as the agent: the agent can forge
this (and could as well not send the event). Root never reads it. What is read is size
limited and parsed line by line; a line that is not ours is skipped, and a journal that
cannot be read or written is said once and the requests still run (at least once).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from initd.agentfs import Dir, Place, Unsafe
from initd.clock import now_iso

KEY_LIMIT = 200  # characters of a key
READ_LIMIT = 8 * 2**20  # of one request's journal; a turn's is a few KiB
KEEP = 512  # requests' journals kept; the oldest go (a repeat comes within seconds)


T = TypeVar("T")
LOST = object()  # what an earlier delivery fired and never recorded left as its outcome


class BadKey(ValueError):
    pass


def check_key(key: str) -> str:
    """A key as a client may send it: 1-200 printable ASCII characters."""
    if not 0 < len(key) <= KEY_LIMIT or not all(" " < c <= "~" for c in key):
        raise BadKey(f"Idempotency-Key: expected 1-{KEY_LIMIT} printable ASCII characters "
                     "without spaces")
    return key


class Entry:
    """One request's journal: what an earlier delivery did, and the lines of this one."""

    def __init__(self, journal: Journal, directory: Dir, name: str,
                 lines: list[dict[str, Any]]) -> None:
        self.journal = journal
        self.directory = directory  # held open for the request
        self.name = name
        self.delivery = 1 + sum(1 for line in lines if "delivery" in line and len(line) == 1)
        self.answer: Any = None
        self.fired: set[str] = set()
        self.outcomes: dict[str, Any] = {}
        for line in lines:
            if "answer" in line:
                self.answer = line["answer"]
            elif isinstance(line.get("fired"), str):
                self.fired.add(line["fired"])
            elif isinstance(line.get("recorded"), str):
                self.fired.add(line["recorded"])
                self.outcomes[line["recorded"]] = line.get("outcome")
        self._write({"delivery": self.delivery})

    @property
    def repeated(self) -> bool:
        return self.delivery > 1

    def seen(self, step: str) -> tuple[bool, Any]:
        """(fired by an earlier delivery, its recorded outcome or None)."""
        return step in self.fired, self.outcomes.get(step)

    def fire(self, step: str) -> None:
        """``step`` is about to run: on the disk first."""
        self.fired.add(step)
        self._write({"fired": step, "delivery": self.delivery, "at": now_iso()}, sync=True)

    def record(self, step: str, outcome: Any) -> None:
        self.outcomes[step] = outcome
        self._write({"recorded": step, "delivery": self.delivery, "outcome": outcome})

    def answered(self, answer: Any) -> None:
        self.answer = answer
        self._write({"answer": answer})

    def _write(self, line: dict[str, Any], sync: bool = False) -> None:
        data = (json.dumps(line, default=str) + "\n").encode()
        try:
            self.directory.append(self.name, data, 0o600, sync=sync)
        except OSError as err:
            self.journal.problem("request journal not written: a repeated request may run "
                                 "its hooks again", err)


def once(entry: Entry | None, step: str, run: Callable[[], T], again: Callable[[Any], T],
         keep: Callable[[T], Any] = lambda value: value) -> T:
    """``run()`` at most once per request: its "fired" line first, ``keep(value)`` as its
    outcome after. A repeat gets ``again(outcome)`` instead: the outcome as recorded
    (None included), or LOST when the earlier delivery fired it and was killed before
    recording. Without an entry (no key), it just runs."""
    if entry is None:
        return run()
    fired, outcome = entry.seen(step)
    if fired:
        return again(outcome if step in entry.outcomes else LOST)
    entry.fire(step)
    value = run()
    entry.record(step, keep(value))
    return value


class Journal:
    """The journals of one session's requests, in ``place`` (never through a link)."""

    def __init__(self, place: Place, warn: Any = None) -> None:
        self.place = place
        self.warn = warn  # (message, **fields) -> None; said once per problem
        self._said: set[str] = set()
        self._locks: dict[str, list[Any]] = {}  # name: [lock, users]
        self._guard = threading.Lock()
        self._new = 0

    @staticmethod
    def file_name(kind: str, key: str) -> str:
        return f"{kind}-{hashlib.sha256(key.encode()).hexdigest()[:40]}.jsonl"

    @contextmanager
    def entry(self, kind: str, key: str | None) -> Iterator[Entry | None]:
        """The request's entry, held for its whole run: a repeat that arrives while the
        first still runs waits for it (and then gets its answer). None without a key,
        or when the journal cannot be used (said once): the request runs all the same."""
        if key is None:
            yield None
            return
        name = self.file_name(kind, key)
        with self._guard:
            held = self._locks.setdefault(name, [threading.Lock(), 0])
            held[1] += 1
        directory = None
        try:
            with held[0]:
                try:
                    directory = self.place.open(create=True)
                    new = directory.mtime_ns(name) is None
                    entry: Entry | None = Entry(self, directory, name,
                                                self._read(directory, name))
                except (OSError, ValueError) as err:
                    self.problem("request journal not used: a repeated request may run "
                                 "its hooks again", err)
                    entry = None
                    new = False
                yield entry
                if new:
                    self._new += 1
                    if self._new % 64 == 1:
                        self.prune()
        finally:
            if directory is not None:
                directory.close()
            with self._guard:
                held[1] -= 1
                if not held[1]:
                    del self._locks[name]

    @staticmethod
    def _read(directory: Dir, name: str) -> list[dict[str, Any]]:
        try:
            raw = directory.read(name, READ_LIMIT, whole=False)
        except Unsafe as err:
            raise ValueError(str(err)) from None
        lines = []
        for text in (raw or b"").splitlines():
            try:
                line = json.loads(text)
            except (ValueError, RecursionError):
                continue  # a line a kill cut short: the ones before it stand
            if isinstance(line, dict):
                lines.append(line)
        return lines

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
        if message not in self._said and self.warn is not None:
            self._said.add(message)
            self.warn(message, directory=self.place.path, error=str(err))
