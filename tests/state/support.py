"""A journal (initd/state/journal/) in a test's own directory, and what it said."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from initd.state.agentfs import Place
from initd.state.journal import Journal


class Said:
    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, message: str, **fields: Any) -> None:
        self.lines.append((message, fields))


def journal(tmp_path: Path) -> tuple[Journal, Said]:
    said = Said()
    return Journal(Place(str(tmp_path), ("session", "journal")), said), said
