"""docs/agents.md's table of every agent's events is the code's: generated here from each
agent's wire (events/wire.py's ``Wire.events``) and compared with the page, so that a
format that adds an event, or renames one, changes the page in the same commit."""

from __future__ import annotations

from pathlib import Path

from initd.events.dialects import DIALECTS, WIRES
from initd.hooks import kinds

PAGE = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
BEGIN, END = "<!-- events table: begin -->", "<!-- events table: end -->"


def table() -> str:
    agents = list(WIRES)
    head = ["initd", *(DIALECTS[name].title for name in agents)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for event in kinds.EVENTS:
        cells = [", ".join(f"`{theirs}`" for theirs, ours in WIRES[name].events.items()
                           if ours == event.name) or "—" for name in agents]
        if any(cell != "—" for cell in cells):
            lines.append(f"| `{event.name}`{' (blocks)' if event.blockable else ''} | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines)


def test_the_pages_table_is_the_codes() -> None:
    text = PAGE.read_text(encoding="utf-8")
    shown = text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip()
    assert shown == table(), f"docs/agents.md's table should read:\n\n{table()}\n"


def test_every_agents_event_is_an_event_of_initd() -> None:
    for name, wire in WIRES.items():
        unknown = [theirs for theirs, ours in wire.events.items() if ours not in kinds.BY_NAME]
        assert unknown == [], f"{name}: {unknown}"
