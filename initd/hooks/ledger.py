"""Counts across requests, kept as the requests' own steps: the re-prompts since the last
user turn (message.LoopGuard) and the Stops blocked in a row (events/stoploop.py).

A count written beside the journal is a second write after the journal's line: a
request killed between the two is counted again when it is sent again, or never (a
re-prompt given twice, a user turn that never reset, a Stop counted twice). Here the
step is the count: one line, appended and fsynced before the step acts,

    {"request": NAME, "step": STEP, "value": V, "state": {COUNTS}}

NAME the request's journal entry (journal.Entry.name; null without an Idempotency-Key),
V what the step decided (the attempt given, whether the Stop was blocked), COUNTS the
counts after it. The counts now are the last line's. A request sent again finds its own
line: it gets its value again, and the counts as they were before it, and adds nothing.

The file is read once, when the service starts (a restarted service goes on from it),
and kept short: past COMPACT bytes it is rewritten (atomically) with its newest KEEP
lines. It is the agent's, as the journal is: a line that is not ours is skipped, the
callers bound what a state says, and a ledger that cannot be read or written is said
(``trouble``, the health's) and counts in memory. Without a place it is memory only.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from initd.state.agentfs import Place
from initd.state.journal import Entry

READ_LIMIT = 2**20  # bytes read at the start; a ledger is rewritten past COMPACT
COMPACT = 64 * 1024
KEEP = 256  # lines kept: a request sent again comes within seconds, not 256 steps later

Decide = Callable[[dict[str, Any]], tuple[Any, dict[str, Any]]]


class Ledger:
    def __init__(self, place: Place | None, name: str, warn: Any = None) -> None:
        self.place = place
        self.name = name
        self.warn = warn  # (message, **fields) -> None; said once per problem
        self.trouble: str | None = None  # why the counts are not kept now (the health's)
        self._lock = threading.Lock()
        self._lines: list[dict[str, Any]] | None = None  # read at the first use
        self._size = 0
        self._replace = False  # what is there is not ours to append to (a link, a FIFO)
        self._said: set[str] = set()

    def before(self, entry: Entry | None, step: str) -> dict[str, Any]:
        """The counts before ``entry``'s ``step`` when the request recorded it (it is sent
        again), else the counts now."""
        with self._lock:
            lines = self._read()
            mine = _find(lines, entry, step)
            prior = lines if mine is None else lines[:mine]
            return dict(prior[-1]["state"]) if prior else {}

    def step(self, entry: Entry | None, step: str, decide: Decide) -> Any:
        """``entry``'s ``step``: the value it was given when it was recorded (nothing is
        counted again), else ``decide(counts now)`` → (value, counts after), recorded
        before it is returned."""
        with self._lock:
            lines = self._read()
            mine = _find(lines, entry, step)
            if mine is not None:
                return lines[mine].get("value")
            now = dict(lines[-1]["state"]) if lines else {}
            value, state = decide(dict(now))
            if entry is not None or state != now:  # (else there is nothing to remember)
                self._append({"request": None if entry is None else entry.name,
                              "step": step, "value": value, "state": state})
            return value

    def _read(self) -> list[dict[str, Any]]:
        if self._lines is not None:
            return self._lines
        self._lines = []
        if self.place is None:
            return self._lines
        try:
            with self.place.open(create=True) as directory:
                raw = directory.read(self.name, READ_LIMIT, whole=False) or b""
        except (OSError, ValueError) as err:  # Unsafe (a link, a FIFO) too: counted from 0,
            self._problem("counts not read: counted from 0", err)  # and replaced when
            self._replace = True  # written (renamed over: never followed)
            return self._lines
        self._size = len(raw)
        for text in raw.splitlines():
            try:
                line = json.loads(text)
            except (ValueError, RecursionError):
                continue  # a line a kill cut short, or not ours
            if isinstance(line, dict) and isinstance(line.get("state"), dict):
                self._lines.append(line)
        del self._lines[:-KEEP]
        return self._lines

    def _append(self, line: dict[str, Any]) -> None:
        lines = self._read()
        lines.append(line)
        del lines[:-KEEP]
        if self.place is None:
            return
        data = (json.dumps(line, default=str) + "\n").encode()
        try:
            with self.place.open(create=True) as directory:
                if self._replace or self._size + len(data) > COMPACT:
                    whole = b"".join((json.dumps(kept, default=str) + "\n").encode()
                                     for kept in lines)
                    directory.write(self.name, whole, 0o600)  # (fsynced, renamed in place)
                    self._size, self._replace = len(whole), False
                else:
                    directory.append(self.name, data, 0o600, sync=True)
                    self._size += len(data)
        except (OSError, ValueError) as err:
            self._problem("counts not kept: a restarted hook service counts from what "
                          "it last could read", err)
            return
        self.trouble = None

    def _problem(self, message: str, err: Exception) -> None:
        where = self.name if self.place is None else f"{self.place.path}/{self.name}"
        self.trouble = f"{message} ({where}: {err})"
        if message not in self._said and self.warn is not None:
            self._said.add(message)
            self.warn(message, file=where, error=str(err))


def _find(lines: list[dict[str, Any]], entry: Entry | None, step: str) -> int | None:
    """The index of ``entry``'s line for ``step``, if it has one (the newest)."""
    if entry is None:
        return None
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].get("request") == entry.name and lines[index].get("step") == step:
            return index
    return None


def count(value: object, limit: int) -> int:
    """A count as a ledger may say it (the agent's): an int from 0 to ``limit``, else 0."""
    if not isinstance(value, int) or isinstance(value, bool):
        return 0
    return min(max(value, 0), limit)

