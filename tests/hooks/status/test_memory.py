"""status.json kept in memory (initd/hooks/status/memory.py), for a process with no state
directory: the file lists of a turn are written in a directory of its own."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from initd.hooks.status.memory import MemoryStore
from initd.state.agentfs import Place


def test_state_in_memory_writes_file_lists_only_in_a_directory_of_its_own(
        tmp_path: Path) -> None:
    """With the state directory unwritable, a file hook's list goes to the temp
    directory: into a 0700 mkdtemp of this process's, never a name in /tmp another user
    could take first (a link there, a directory)."""
    first = MemoryStore(Place(str(tmp_path)), "read-only").write_list("fmt", b"a.py\0")
    again = MemoryStore(Place(str(tmp_path)), "read-only").write_list("fmt", b"b.py\0")
    assert Path(first).read_bytes() == b"a.py\0" and Path(again).read_bytes() == b"b.py\0"
    assert Path(first).parent != Path(again).parent  # each store its own directory
    info = os.lstat(Path(first).parent)
    assert (info.st_uid, oct(info.st_mode & 0o777)) == (os.geteuid(), "0o700")
    for made in (first, again):
        shutil.rmtree(Path(made).parent)
