"""Codex's event names (initd/events/codex/names.py): each both ways, and docs/codex.md's
table of events is the code."""

from __future__ import annotations

from initd.events.codex.names import EVENTS, NAMES
from initd.hooks import kinds


def test_every_event_has_its_name_both_ways() -> None:
    assert {NAMES[event] for event in EVENTS.values()} == set(EVENTS)
    assert all(kinds.resolve(event) is not None for event in EVENTS.values())


def test_the_docs_table_of_events_is_the_code() -> None:
    """docs/codex.md's "Events" table: each Codex event and initd's, as names.EVENTS has
    them, and the matcher column as names.MATCHED."""
    from pathlib import Path

    from initd.events.codex.names import MATCHED

    text = (Path(__file__).resolve().parents[3] / "docs" / "codex.md").read_text()
    section = text.split("\n## Events\n", 1)[1].split("\n## ", 1)[0]
    rows = [[cell.strip().strip("`") for cell in line.strip("|").split("|")]
            for line in section.splitlines() if line.startswith("| `")]
    assert {row[0]: row[1] for row in rows} == EVENTS
    assert {row[1] for row in rows if not row[2].startswith("(")} == set(MATCHED)
