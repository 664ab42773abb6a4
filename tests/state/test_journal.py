"""The request journal (initd/state/journal/) on its own: what an earlier delivery did, read
back; and what the agent (who owns the directory) may leave there: garbage, a cut line,
a link to a root file, a FIFO, a huge file, a link for the directory. None of it runs a
hook twice that was recorded, hangs, or touches the root-owned canary; a journal that
cannot be used is said, and the request runs all the same."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from initd.state.idempotency import digest
from initd.state.journal import (
    FULL,
    KEEP,
    READ_LIMIT,
    InFlight,
    Journal,
    KeyReused,
)
from tests.state.support import journal


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
