"""Codex's ``apply_patch`` text (initd/events/codex/patch.py): every file a patch writes is
named."""

from __future__ import annotations

import pytest

from initd.events.codex import patch


@pytest.mark.parametrize(("text", "files"), [
    ("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n", ["a"]),
    ("<<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n", ["a"]),
    ("*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End Patch", ["b"]),
    ("*** Begin Patch\n*** Update File: a\n@@\n *** Add File: b\n*** End Patch", ["a", "b"]),
    ("not a patch", []),
])
def test_a_patch_names_every_file_it_writes(text: str, files: list[str]) -> None:
    """Every header names a file, indented or not (a context line that looks like one
    too: shown to a guard, it costs a needless look, never a file not seen)."""
    assert [op.written for op in patch.parse(text)] == files
