"""One request's journal (Entry), and ``once``: a step at most once per request.

Each request's file has one line per step, written before the step goes on:

* ``{"delivery": N, "body": HASH}``: the request arrived (N: 1, then 2 for a repeat,
  …), with the sha256 of its body: the same key with another body is refused (KeyReused,
  the API's 422), never answered with the first body's answer;
* ``{"fired": STEP, "delivery": N}``: a hook is about to run (this one is also on the
  disk before it runs, so that not even a crash of the machine runs it twice);
* ``{"recorded": STEP, "delivery": N, "outcome": …}``: what came of it;
* ``{"answer": …}``: the answer the client was sent.

A journal is never longer than what is read back of it (READ_LIMIT): a line that would
not fit is not written. An outcome or an answer (a hook's JSON answer alone may be 1 MiB)
is kept whole when it is at most LINE_LIMIT and leaves RESERVE for the small lines (a
delivery, a step fired); else ``{"recorded": STEP, "dropped": true}`` stands in for it,
and a repeat reports that step as not known and does not run it again (an answer not
kept is composed again from the steps). A step whose "fired" line cannot be written is
not run (a repeat could not know it ran), and in a journal with no room left (one the
agent filled) every step counts as fired. So a journal is always read back whole, and
at most once holds however large the hooks' answers are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from initd.state.agentfs import Dir
from initd.state.clock import now_iso

# A hook's recorded result carries its JSON answer whole (up to 1 MiB: events/answers.py)
# beside the 64 KiB of stdout shown, ~1.1 MiB as a line: a request's journal holds a
# dozen such hooks before an outcome is dropped (and its step fails closed on a repeat),
# and it is read whole, into memory, only when its request comes again.
READ_LIMIT = 16 * 2**20  # of one request's journal; a turn's is a few KiB
LINE_LIMIT = 4 * 2**20  # an outcome or an answer kept whole; past it, "dropped"
RESERVE = 2**20  # of READ_LIMIT, left to the small lines (thousands of steps fired)
SMALL = 2048  # bytes of a small line at most (a step's name is cut to STEP_LIMIT)
STEP_LIMIT = 200  # characters of a step's name kept (a file's name is the agent's)


T = TypeVar("T")


class Unkept:
    """What stands in for a step's outcome that an earlier delivery did not keep: ``why``
    it is not known (the step is not run again: it may have run)."""

    def __init__(self, why: str) -> None:
        self.why = why


LOST = Unkept("interrupted: it was running when the hook service stopped")
DROPPED = Unkept("its result was too large for the request's journal, so it is not known")
FULL = Unkept("the request's journal is full, so whether it ran is not known")


class KeyReused(Exception):
    """The key of an earlier request, with another body (the API's 422)."""


class Said(Protocol):
    def problem(self, message: str, err: Exception) -> None: ...


class Entry:
    """One request's journal: what an earlier delivery did, and the lines of this one."""

    def __init__(self, journal: Said, directory: Dir, name: str, raw: bytes,
                 body: str | None = None) -> None:
        self.journal = journal
        self.directory = directory  # held open for the request
        self.name = name
        lines = _lines(raw)
        deliveries = [line for line in lines if "delivery" in line
                      and "fired" not in line and "recorded" not in line]
        first = next((d["body"] for d in deliveries if isinstance(d.get("body"), str)), None)
        if body is not None and first is not None and body != first:
            raise KeyReused("Idempotency-Key: already used for a request with a different "
                            "body; a key names one request (send a new one with a new key)")
        self.delivery = 1 + len(deliveries)
        self.size = len(raw)  # what the file holds: never more than is read back
        self.full = self.size + SMALL > READ_LIMIT  # (not ours: what it says may be cut)
        self._broken = not raw.endswith(b"\n") and bool(raw)  # a line a kill cut short
        self.written = True  # every line of this delivery is in the journal
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
                self.outcomes[line["recorded"]] = DROPPED if "dropped" in line \
                    else line.get("outcome")
        self._write({"delivery": self.delivery, "body": body})

    @property
    def repeated(self) -> bool:
        return self.delivery > 1

    def seen(self, step: str) -> tuple[bool, Any]:
        """(fired by an earlier delivery, its recorded outcome or None). In a journal too
        full to say, every step counts as fired."""
        step = _step(step)
        return step in self.fired or self.full, self.outcomes.get(step)

    def kept(self, step: str) -> Any:
        """An earlier delivery's outcome of a fired ``step``: as recorded, or Unkept."""
        step = _step(step)
        if step in self.outcomes:
            return self.outcomes[step]
        return LOST if step in self.fired else FULL

    def fire(self, step: str) -> bool:
        """``step`` is about to run: on the disk first. False when that line could not be
        written for want of room: then it must not run."""
        self.fired.add(_step(step))
        return self._write({"fired": _step(step), "delivery": self.delivery,
                            "at": now_iso()}, sync=True)

    def record(self, step: str, outcome: Any) -> None:
        self.outcomes[_step(step)] = outcome
        if not self._write({"recorded": _step(step), "delivery": self.delivery,
                            "outcome": outcome}, large=True):
            self._write({"recorded": _step(step), "delivery": self.delivery,
                         "dropped": True})

    def answered(self, answer: Any) -> None:
        """The answer sent, kept when it fits (else composed again from the steps)."""
        self.answer = answer
        self._write({"answer": answer}, large=True)

    def _write(self, line: dict[str, Any], sync: bool = False, large: bool = False) -> bool:
        """``line`` appended, if it fits: False when it does not (nothing is written)."""
        data = _encoded(line)
        room = READ_LIMIT - self.size - (RESERVE if large else 0)
        if len(data) > (min(room, LINE_LIMIT) if large else room):
            self.full = self.full or not large
            return False
        if self._broken:  # a line a kill or an error cut short ends here, not in this one
            data = b"\n" + data
        try:
            self.directory.append(self.name, data, 0o600, sync=sync)
        except OSError as err:
            self.written = False
            self._broken = True
            self.journal.problem("request journal not written: a repeated request may run "
                                 "its hooks again", err)
            return True  # (not for want of room: the request goes on, said)
        self.size += len(data)
        self._broken = False
        return True


def _step(step: str) -> str:
    """A step's name as kept: a long one (a file the payload names) by its hash."""
    if len(step) <= STEP_LIMIT:
        return step
    sha = hashlib.sha256(step.encode(errors="replace")).hexdigest()
    return f"{step[:STEP_LIMIT - 66]}…{sha}"


def _encoded(line: dict[str, Any]) -> bytes:
    """One line: UTF-8 as it is (an "é" as \\u00e9 would be 6 bytes, not 2), unless a
    text has what UTF-8 cannot say (a lone surrogate from a payload): then escaped."""
    try:
        return (json.dumps(line, default=str, ensure_ascii=False) + "\n").encode()
    except UnicodeEncodeError:
        return (json.dumps(line, default=str) + "\n").encode()


def _lines(raw: bytes) -> list[dict[str, Any]]:
    lines = []
    for text in raw.splitlines():
        try:
            line = json.loads(text)
        except (ValueError, RecursionError):
            continue  # a line a kill cut short: the ones before it stand
        if isinstance(line, dict):
            lines.append(line)
    return lines


def once(entry: Entry | None, step: str, run: Callable[[], T], again: Callable[[Any], T],
         keep: Callable[[T], Any] = lambda value: value) -> T:
    """``run()`` at most once per request: its "fired" line first, ``keep(value)`` as its
    outcome after. A repeat gets ``again(outcome)`` instead: the outcome as recorded
    (None included), or an Unkept (LOST when the earlier delivery fired it and was killed
    before recording; DROPPED, too large to keep; FULL, a journal with no room left for
    its "fired" line: not run). Without an entry (no key), it just runs."""
    if entry is None:
        return run()
    fired, _ = entry.seen(step)
    if fired:
        return again(entry.kept(step))
    if not entry.fire(step):
        return again(FULL)
    value = run()
    entry.record(step, keep(value))
    return value
