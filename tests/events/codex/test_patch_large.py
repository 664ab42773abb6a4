"""Claude Code's file tools as Codex's apply_patch (initd/events/codex/patch.build): each
line of the text after its mark, the last newline never doubled nor lost, and read back
by patch.parse as the same text; made with one copy of a Write's file at a time, not a
list of its lines (tracemalloc counts what Python allocates)."""

from __future__ import annotations

import tracemalloc

import pytest

from initd.events.codex import patch

BEGIN, END = patch.BEGIN, patch.END


@pytest.mark.parametrize(("content", "body"), [
    ("", ""), ("a", "+a\n"), ("a\n", "+a\n"), ("a\nb", "+a\n+b\n"), ("\n", "+\n"),
    ("\n\n", "+\n+\n"), ("a\n\nb\n", "+a\n+\n+b\n"), ("a\r\nb", "+a\r\n+b\n"),
])
def test_a_write_is_an_added_file(content: str, body: str) -> None:
    made = patch.build("Write", {"file_path": "/ws/a.py", "content": content}, "/ws")
    assert made == f"{BEGIN}\n*** Add File: a.py\n{body}{END}\n"
    [op] = patch.parse(made)
    if "\r" not in content:  # (Codex's parser trims a line's end: parser.rs)
        assert patch.text(op.new) == (content if content.endswith("\n") or not content
                                      else content + "\n")


def test_an_edit_and_a_multiedit_are_hunks() -> None:
    made = patch.build("MultiEdit", {"file_path": "b.py", "edits": [
        {"old_string": "x\ny", "new_string": "z\n"}, {"new_string": "w"}, "junk"]}, "/ws")
    assert made == (f"{BEGIN}\n*** Update File: b.py\n@@\n-x\n-y\n+z\n@@\n+w\n{END}\n")
    assert patch.build("Edit", {"file_path": "c", "old_string": "", "new_string": ""},
                       "/ws") == f"{BEGIN}\n*** Update File: c\n@@\n{END}\n"
    assert patch.build("Write", {"content": "no path"}, "/ws") is None


def test_a_16_mib_write_costs_one_copy_at_a_time() -> None:
    content = "\tvalue = compute('x', table[1])  # step\n" * (2**24 // 40)
    tracemalloc.start()
    try:
        made = patch.build("Write", {"file_path": "/ws/a.py", "content": content}, "/ws")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert made is not None and len(made) > len(content)
    assert peak < 2.2 * len(content), peak  # the replace and the join: 2 (was 5.9)


def test_a_large_patch_is_read_whole_a_line_at_a_time() -> None:
    """A 4 MiB patch of Codex's own (its lines were a tuple made again per line: a 1 MiB
    one took 26 s, this one would not end within the test's 60 s deadline)."""
    content = "\tvalue = compute('x', table[1])  # step\n" * (2**22 // 40)
    made = patch.build("Write", {"file_path": "a.py", "content": content}, "/ws")
    update = f"{BEGIN}\n*** Update File: b.py\n@@\n x\n-y\n+z\n{END}\n"
    assert made is not None
    [added, updated] = patch.parse(made + update)
    assert patch.text(added.new) == content and added.kind == "add"
    assert (updated.old, updated.new) == (("x", "y"), ("x", "z"))
