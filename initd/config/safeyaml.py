"""YAML the agent may have written (hook front matter, hook systems' config files),
parsed so that it cannot cost whoever reads it, root included (invariant 8): safely (no
Python objects), with no anchors or aliases (a 600-byte alias bomb expands to gigabytes
once anything walks it: a message, a hash, a copy), at most DEPTH levels of nesting and
NODES nodes. Every problem is a ``yaml.YAMLError`` with the line and column it is at."""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.nodes import Node

DEPTH = 32
NODES = 20_000


class _Loader(yaml.SafeLoader):
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        event: Any = self.peek_event()  # type: ignore[no-untyped-call]
        mark: Any = event.start_mark
        anchor = getattr(event, "anchor", None)
        if isinstance(event, yaml.AliasEvent):
            raise ComposerError(None, None, f"YAML aliases (*{anchor}) and anchors are not "
                                "accepted here: write the value out", mark)
        if anchor is not None:
            raise ComposerError(None, None, f"YAML anchors (&{anchor}) and aliases are not "
                                "accepted here: write the value out", mark)
        self._nodes += 1
        if self._nodes > NODES:
            raise ComposerError(None, None, f"more than {NODES} values", mark)
        if self._depth >= DEPTH:
            raise ComposerError(None, None, f"nested more than {DEPTH} levels deep", mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load(text: str) -> Any:
    """The document in ``text`` (None when empty)."""
    loader = _Loader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
