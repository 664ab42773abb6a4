"""The request journal (initd/state/journal/) on its own: what an earlier delivery did, read
back; and what the agent (who owns the directory) may leave there: garbage, a cut line,
a link to a root file, a FIFO, a huge file, a link for the directory. None of it runs a
hook twice that was recorded, hangs, or touches the root-owned canary; a journal that
cannot be used is said, and the request runs all the same."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from initd.state.agentfs import Place
from initd.state.idempotency import digest
from initd.state.journal import (
    DROPPED,
    FULL,
    KEEP,
    LINE_LIMIT,
    LOST,
    READ_LIMIT,
    SMALL,
    InFlight,
    Journal,
    KeyReused,
    once,
)


class Said:
    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, message: str, **fields: Any) -> None:
        self.lines.append((message, fields))


def journal(tmp_path: Path) -> tuple[Journal, Said]:
    said = Said()
    return Journal(Place(str(tmp_path), ("session", "journal")), said), said


def test_a_second_delivery_sees_what_the_first_fired_recorded_and_answered(tmp_path: Path
                                                                            ) -> None:
    jr, said = journal(tmp_path)
    with jr.entry("event", "k") as entry:
        assert entry is not None and entry.delivery == 1 and not entry.repeated
        assert entry.seen("a") == (False, None)
        entry.fire("a")
        entry.record("a", {"status": "ok"})
        entry.fire("b")  # killed here
    with jr.entry("event", "k") as again:
        assert again is not None and again.delivery == 2 and again.answer is None
        assert again.seen("a") == (True, {"status": "ok"})
        assert again.seen("b") == (True, None)
        assert again.seen("c") == (False, None)
        again.answered({"blocked": False})
    with jr.entry("event", "k") as third:
        assert third is not None and third.delivery == 3
        assert third.answer == {"blocked": False}
    with jr.entry("event", "other") as other:
        assert other is not None and other.delivery == 1 and other.seen("a") == (False, None)
    with jr.entry("turn", "k") as turn:  # a turn's key is not an event's
        assert turn is not None and turn.delivery == 1
    assert said.lines == []


def test_no_key_no_journal(tmp_path: Path) -> None:
    jr, _ = journal(tmp_path)
    with jr.entry("event", None) as entry:
        assert entry is None
    assert not (tmp_path / "session").exists()


def test_garbage_and_a_cut_last_line_leave_the_lines_before_them(tmp_path: Path) -> None:
    jr, said = journal(tmp_path)
    with jr.entry("event", "k") as entry:
        assert entry is not None
        entry.fire("a")
    path = tmp_path / "session" / "journal" / Journal.file_name("event", "k")
    with path.open("a") as out:
        out.write('not json\n[1, 2]\n{"recorded": 5}\n' + "[" * 100_000 + "\n")
        out.write('{"recorded": "a", "outcome": {"status": "ok"}')  # cut by a kill: no \n}
    with jr.entry("event", "k") as again:
        assert again is not None
        assert again.seen("a") == (True, None)  # fired; the cut record does not count
    assert said.lines == []


@pytest.mark.parametrize("planted", ["link-file", "fifo", "link-dir"])
def test_what_the_agent_plants_is_never_followed(tmp_path: Path, planted: str) -> None:
    canary = tmp_path / "root-canary"
    canary.write_text("root's\n")
    root_dir = tmp_path / "root-dir"
    root_dir.mkdir()
    jr, said = journal(tmp_path)
    where = tmp_path / "session" / "journal"
    name = Journal.file_name("event", "k")
    if planted == "link-dir":
        where.parent.mkdir()
        where.symlink_to(root_dir)
    else:
        where.mkdir(parents=True)
        if planted == "fifo":
            os.mkfifo(where / name)
        else:
            (where / name).symlink_to(canary)
    # (a FIFO opened for reading would wait for a writer for ever: the test's timeout)
    with jr.entry("event", "k") as entry:
        assert entry is None  # not used: the request runs, at least once
    assert canary.read_text() == "root's\n"
    assert list(root_dir.iterdir()) == []
    assert said.lines and "not used" in said.lines[0][0]


def test_a_huge_journal_is_read_only_so_far(tmp_path: Path) -> None:
    jr, _ = journal(tmp_path)
    where = tmp_path / "session" / "journal"
    where.mkdir(parents=True)
    with (where / Journal.file_name("event", "k")).open("w") as out:
        out.write(json.dumps({"fired": "a"}) + "\n")
        out.write(("x" * 1023 + "\n") * 20 * 1024)  # 20 MiB of lines that are not ours
    with jr.entry("event", "k") as entry:
        assert entry is not None and entry.seen("a") == (True, None)
        # past READ_LIMIT: what it says past what is read is not known, so every step
        # counts as fired (none runs: at most once), and nothing more is written to it
        assert entry.full and entry.seen("b") == (True, None) and entry.kept("b") is FULL
        assert entry.size == READ_LIMIT


def test_only_the_newest_journals_are_kept(tmp_path: Path) -> None:
    jr, _ = journal(tmp_path)
    for n in range(KEEP + 20):
        with jr.entry("event", f"k{n}"):
            pass
    where = tmp_path / "session" / "journal"
    jr.prune()
    kept = {p.name for p in where.iterdir()}
    assert len(kept) == KEEP
    assert Journal.file_name("event", f"k{KEEP + 19}") in kept
    assert Journal.file_name("event", "k0") not in kept


def test_a_repeat_that_comes_while_the_first_runs_is_refused_at_once(tmp_path: Path
                                                                       ) -> None:
    """IETF draft-ietf-httpapi-idempotency-key-header, "Error Scenarios": "If the request
    is retried, while the original request is still being processed, the resource server
    SHOULD reply with an HTTP 409" (the API's mapping of InFlight). It never waits (the
    first may run its hooks for hours), and the first goes on; once it is answered, the
    repeat gets its answer."""
    jr, _ = journal(tmp_path)
    with jr.entry("event", "k", digest({"a": 1})) as entry:
        assert entry is not None
        # (in the same thread: were it to wait, it would wait for itself, for ever)
        with pytest.raises(InFlight, match="still being processed"), \
                jr.entry("event", "k", digest({"a": 1})):
            pass
        with jr.entry("event", "other") as other:  # another key is not held up
            assert other is not None
        entry.answered({"n": 1})
    with jr.entry("event", "k", digest({"a": 1})) as again:
        assert again is not None and again.answer == {"n": 1}


def test_the_same_key_with_another_body_is_refused_and_writes_nothing(tmp_path: Path
                                                                      ) -> None:
    """IETF draft-ietf-httpapi-idempotency-key-header, "Error Scenarios": "If there is an
    attempt to reuse an idempotency key with a different request payload, the resource
    server SHOULD reply with a HTTP 422" (the API's mapping of KeyReused): `rm -rf /`
    never gets the answer given to `ls`."""
    jr, _ = journal(tmp_path)
    ls, rm = digest({"command": "ls"}), digest({"command": "rm -rf /"})
    assert ls != rm and digest({"b": 1, "a": 2}) == digest({"a": 2, "b": 1})
    with jr.entry("event", "k", ls) as entry:
        assert entry is not None
        entry.answered({"blocked": False})
    path = tmp_path / "session" / "journal" / Journal.file_name("event", "k")
    before = path.read_bytes()
    with pytest.raises(KeyReused, match="different body"), jr.entry("event", "k", rm):
        pytest.fail("the body was taken")
    assert path.read_bytes() == before  # not even a delivery line
    with jr.entry("event", "k", ls) as same:  # the first body still gets its answer
        assert same is not None and same.answer == {"blocked": False}
    with pytest.raises(KeyReused), jr.entry("event", "k", rm):  # (not InFlight: no lock
        pytest.fail("the body was taken")                         # was left held)


def test_a_journal_that_cannot_be_written_is_trouble_until_one_is(tmp_path: Path) -> None:
    """The health's problem (service/core.py): found at the start by check(), each entry
    says whether it was journaled whole, and a request journaled whole clears it."""
    jr, said = journal(tmp_path)
    where = tmp_path / "session" / "journal"
    where.parent.mkdir(parents=True)
    where.write_text("a file where the directory goes")
    jr.check()
    assert jr.trouble is not None and "not written" in jr.trouble and str(where) in jr.trouble
    with jr.entry("event", "k") as entry:
        assert entry is None  # not used: the request runs, at least once
    assert jr.trouble is not None and "not used" in jr.trouble
    where.unlink()
    with jr.entry("event", "k") as entry:
        assert entry is not None and entry.written
    assert jr.trouble is None
    assert [message for message, _ in said.lines] == [
        "request journal not written: a repeated request may run its hooks again",
        "request journal not used: a repeated request may run its hooks again"]


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
