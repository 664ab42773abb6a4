"""The ledger (hooks/ledger.py): counts kept as the steps of the requests that made them,
so a request sent again counts nothing twice, and a restarted service goes on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from initd.hooks.ledger import COMPACT, KEEP, Ledger, count
from initd.state.agentfs import Place
from initd.state.journal import Entry, Journal


def plus(counts: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    n = count(counts.get("n"), 10_000) + 1
    return n, {"n": n}


@pytest.fixture
def entries(tmp_path: Path) -> Iterator[Any]:
    journal = Journal(Place(str(tmp_path), ("journal",)))
    with ExitStack() as stack:
        def entry(key: str) -> Entry:
            made = stack.enter_context(journal.entry("turn", key))
            assert made is not None
            return made
        yield entry


def test_a_request_sent_again_gets_its_value_and_counts_nothing(tmp_path: Path,
                                                                entries: Any) -> None:
    place = Place(str(tmp_path), ("journal",))
    ledger = Ledger(place, "n.steps")
    first, second = entries("a"), entries("b")
    assert ledger.step(first, "add", plus) == 1
    assert ledger.step(second, "add", plus) == 2
    assert ledger.step(first, "add", plus) == 1  # sent again: its own line
    assert ledger.before(first, "add") == {}  # the counts before it
    assert ledger.before(second, "add") == {"n": 1}
    assert ledger.before(None, "add") == {"n": 2}  # now
    assert ledger.step(None, "add", plus) == 3  # no key: counted, every time
    again = Ledger(place, "n.steps")  # a restarted service: from the file
    assert again.step(second, "add", plus) == 2 and again.before(None, "x") == {"n": 3}
    lines = (tmp_path / "journal" / "n.steps").read_text().splitlines()
    assert [json.loads(line)["value"] for line in lines] == [1, 2, 3]


@pytest.mark.slow
def test_past_compact_it_is_rewritten_with_its_newest_lines(tmp_path: Path,
                                                            entries: Any) -> None:
    place = Place(str(tmp_path), ("journal",))
    ledger = Ledger(place, "n.steps")
    requests = [entries(f"k{i}") for i in range(KEEP + 400)]
    for request in requests:
        ledger.step(request, "add", plus)
    path = tmp_path / "journal" / "n.steps"
    assert path.stat().st_size <= COMPACT + 200
    again = Ledger(place, "n.steps")
    assert again.before(None, "add") == {"n": KEEP + 400}
    assert again.step(requests[-1], "add", plus) == KEEP + 400  # a recent one: found


@pytest.mark.parametrize("planted", ["garbage{", '{"state": 7}', "[1]", '{"nope": 1}'])
def test_lines_that_are_not_ours_are_skipped(tmp_path: Path, planted: str) -> None:
    (tmp_path / "journal").mkdir()
    (tmp_path / "journal" / "n.steps").write_text(
        '{"request": null, "step": "add", "value": 4, "state": {"n": 4}}\n' + planted + "\n")
    ledger = Ledger(Place(str(tmp_path), ("journal",)), "n.steps")
    assert ledger.step(None, "add", plus) == 5


def test_without_a_place_it_counts_in_memory(entries: Any) -> None:
    ledger = Ledger(None, "n")
    request = entries("a")
    assert [ledger.step(request, "add", plus) for _ in range(2)] == [1, 1]
    assert ledger.step(None, "add", plus) == 2 and ledger.trouble is None


def test_a_ledger_that_cannot_be_written_is_trouble_until_it_is(tmp_path: Path) -> None:
    (tmp_path / "journal").write_text("a file where the directory goes")
    said: list[str] = []
    ledger = Ledger(Place(str(tmp_path), ("journal",)), "n.steps",
                    lambda message, **_: said.append(message))
    assert ledger.step(None, "add", plus) == 1  # counted in memory all the same
    assert ledger.trouble is not None and str(tmp_path / "journal") in ledger.trouble
    (tmp_path / "journal").unlink()
    assert ledger.step(None, "add", plus) == 2
    assert ledger.trouble is None
    assert said == ["counts not read: counted from 0", "counts not kept: a restarted hook "
                    "service counts from what it last could read"]  # each said once
