"""The request journal (initd/journal.py) on its own: what an earlier delivery did, read
back; and what the agent (who owns the directory) may leave there: garbage, a cut line,
a link to a root file, a FIFO, a huge file, a link for the directory. None of it runs a
hook twice that was recorded, hangs, or touches the root-owned canary; a journal that
cannot be used is said, and the request runs all the same."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from initd.agentfs import Place
from initd.journal import KEEP, LOST, BadKey, Journal, check_key, once


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
    started = time.monotonic()
    with jr.entry("event", "k") as entry:
        assert entry is None  # not used: the request runs, at least once
    assert time.monotonic() - started < 5  # a FIFO is never opened for reading
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
    started = time.monotonic()
    with jr.entry("event", "k") as entry:
        assert entry is not None and entry.seen("a") == (True, None)
    assert time.monotonic() - started < 5


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


def test_a_repeat_that_comes_while_the_first_runs_waits_and_gets_its_answer(
        tmp_path: Path) -> None:
    jr, _ = journal(tmp_path)
    inside = threading.Event()
    seen: list[Any] = []

    def first() -> None:
        with jr.entry("event", "k") as entry:
            assert entry is not None
            inside.set()
            time.sleep(0.3)
            entry.answered({"n": 1})

    def second() -> None:
        inside.wait(5)
        with jr.entry("event", "k") as entry:
            assert entry is not None
            seen.append(entry.answer)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == [{"n": 1}]


@pytest.mark.parametrize("key", ["", "a b", "x" * 201, "é", "tab\there", "nl\n"])
def test_bad_keys(key: str) -> None:
    with pytest.raises(BadKey, match="Idempotency-Key"):
        check_key(key)


def test_good_keys() -> None:
    for key in ("k", "toolu_01ABC", "x" * 200, "a:b/c=d"):
        assert check_key(key) == key


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
