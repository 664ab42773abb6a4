"""One request's journal and ``once`` (initd/state/journal/entry.py): a step at most once per
request, a recorded None told from a lost step, what is stored capped so that a journal
is always read back whole (an outcome not kept fails closed), a step's name kept short,
a line cut by a kill taking no other with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from initd.state.journal import Journal
from initd.state.journal.entry import DROPPED, FULL, LINE_LIMIT, LOST, READ_LIMIT, SMALL, once
from tests.state.support import journal


def test_once_runs_a_step_once_and_tells_a_recorded_none_from_a_lost_one(tmp_path: Path
                                                                         ) -> None:
    jr, _ = journal(tmp_path)
    runs: list[str] = []

    def run(step: str, value: object) -> object:
        runs.append(step)
        return value

    with jr.entry("turn", "k") as entry:
        assert once(entry, "guard", lambda: run("guard", None), lambda kept: kept) is None
        entry.fire("killed")  # and nothing after it
    with jr.entry("turn", "k") as again:
        said: list[object] = []
        assert once(again, "guard", lambda: run("guard", 1),
                    lambda kept: said.append(kept) or "again") == "again"
        assert once(again, "killed", lambda: run("killed", 1),
                    lambda kept: said.append(kept) or "again") == "again"
        assert once(again, "new", lambda: run("new", 5), lambda kept: kept) == 5
    assert said == [None, LOST]  # a guard that said no is not a step the kill lost
    assert runs == ["guard", "new"]
    assert once(None, "x", lambda: run("x", 7), lambda kept: kept) == 7


# What is stored is capped so that a journal is always read back whole. A hook's recorded
# result carries its JSON answer whole (up to 1 MiB, events/answers.py): a dozen of them,
# and an uncapped journal was past what is read of it, so that the steps after the cut
# (their "fired" lines included) were unknown to a repeat, which ran them again.

def big(n: int, char: str = "x") -> dict[str, Any]:
    """A recorded hook result as the engine keeps it: its whole JSON answer, ~1 MiB."""
    return {"status": "ok", "answer": '{"reason": "' + char * n + '"}', "n": n}


@pytest.mark.timeout(300)  # (24 MiB written, fsynced: slow on a busy disk)
@pytest.mark.parametrize("char", ["x", "é", "\x01"])  # (JSON writes the last two longer)
def test_a_journal_of_large_answers_is_read_back_whole_and_runs_nothing_twice(
        tmp_path: Path, char: str) -> None:
    jr, _ = journal(tmp_path)
    answer = big(2**20 // len(char.encode()), char)  # (a hook's stdout: 1 MiB at most)
    steps = [f"hook {i}" for i in range(24)]
    runs: list[str] = []
    with jr.entry("event", "k") as entry:
        assert entry is not None
        for step in steps:
            once(entry, step, lambda step=step: runs.append(step) or answer,  # type: ignore[misc]
                 lambda kept: pytest.fail("a first delivery repeats nothing"))
        entry.answered({"results": ["y" * 2**20] * 3})
    path = tmp_path / "session" / "journal" / Journal.file_name("event", "k")
    assert path.stat().st_size <= READ_LIMIT  # so it is read back whole
    assert runs == steps
    with jr.entry("event", "k") as again:
        assert again is not None and again.delivery == 2
        kept = [once(again, step, lambda: pytest.fail("ran twice"), lambda kept: kept)
                for step in steps]
    whole = [k for k in kept if k is not DROPPED]
    assert whole == [answer] * len(whole)  # those kept, whole: a dozen hooks' answers
    assert len(whole) >= (0 if char == "\x01" else 12)  # (JSON: 6 bytes a control char)
    assert kept[len(whole):] == [DROPPED] * (len(steps) - len(whole))  # the rest: said
    assert all(len(line) <= LINE_LIMIT for line in path.read_bytes().splitlines())


@pytest.mark.slow
def test_a_dropped_outcome_fails_closed_and_a_full_journal_runs_no_more_steps(
        tmp_path: Path) -> None:
    """A step whose outcome was not kept, or that could not be marked as fired, is never
    run (again): an error that blocks a blockable event (actions.replayed), not a pass."""
    from initd.events.actions import Status, replayed

    for unkept in (DROPPED, FULL, LOST):
        result = replayed(unkept)
        assert (result.status, result.fails_closed) == (Status.ERROR, True)
        assert unkept.why in (result.error or "") and "not run again" in (result.error or "")
    assert replayed(LOST, awaited=False).fails_closed is False  # fire-and-forget: no guard

    jr, _ = journal(tmp_path)
    where = tmp_path / "session" / "journal"
    where.mkdir(parents=True)
    path = where / Journal.file_name("event", "k")
    path.write_bytes(b'{"fired": "old"}\n' * (READ_LIMIT // 17 + 10))  # the agent's: past
    runs: list[str] = []  # the limit, so what it says may go on past what is read
    with jr.entry("event", "k") as entry:
        assert entry is not None
        assert once(entry, "new", lambda: runs.append("new"), lambda kept: kept) is FULL
    assert runs == []
    path.write_bytes(b'{"delivery": 1}\n' * ((READ_LIMIT - SMALL) // 16 + 1))  # no room
    with jr.entry("event", "k2") as entry:  # (another key: a journal of its own)
        assert entry is not None
    with jr.entry("event", "k") as entry:
        assert entry is not None
        assert once(entry, "a", lambda: runs.append("a"), lambda kept: kept) is FULL
    assert runs == [] and path.stat().st_size <= READ_LIMIT


def test_a_step_named_by_a_huge_file_name_is_kept_short_and_still_once(tmp_path: Path
                                                                       ) -> None:
    jr, _ = journal(tmp_path)
    long, other = "hook " + "f" * 2**20, "hook " + "f" * (2**20 - 1) + "g"
    with jr.entry("event", "k") as entry:
        assert entry is not None
        once(entry, long, lambda: 1, lambda kept: pytest.fail("first"))
    path = tmp_path / "session" / "journal" / Journal.file_name("event", "k")
    assert path.stat().st_size < 2 * SMALL
    with jr.entry("event", "k") as again:
        assert again is not None
        assert once(again, long, lambda: pytest.fail("twice"), lambda kept: kept) == 1
        assert once(again, other, lambda: 2, lambda kept: pytest.fail("not that one")) == 2


def test_a_line_cut_short_does_not_take_the_next_one_with_it(tmp_path: Path) -> None:
    """A kill in the middle of a large write leaves half a line: the next delivery's
    lines start on a line of their own (else its first "fired" line would be lost)."""
    jr, _ = journal(tmp_path)
    with jr.entry("event", "k") as entry:
        assert entry is not None
        entry.fire("a")
    path = tmp_path / "session" / "journal" / Journal.file_name("event", "k")
    with path.open("ab") as cut:
        cut.write(b'{"recorded": "a", "outcome": {"stdout": "hal')
    with jr.entry("event", "k") as again:
        assert again is not None
        again.fire("b")
    with jr.entry("event", "k") as third:
        assert third is not None and third.seen("b") == (True, None)
        assert third.kept("a") is LOST
