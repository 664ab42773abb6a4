"""A file no name leads to (initd/state/agentfs/scratch.py): made in the directory, gone
with its descriptor, nothing ever left there; where the file system has no O_TMPFILE, a
random new name never follows what someone planted, and is unlinked at once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from initd.state.agentfs import Place, scratch, unnamed


def test_the_file_has_no_name_and_goes_with_its_descriptor(tmp_path: Path) -> None:
    with Place(str(tmp_path)).open() as where:
        fd = unnamed(where)
    try:
        assert os.listdir(tmp_path) == []
        os.write(fd, b"body")
        assert os.pread(fd, 4, 0) == b"body" and os.fstat(fd).st_mode & 0o777 == 0o600
        assert os.fstat(fd).st_nlink == 0
    finally:
        os.close(fd)


def test_without_o_tmpfile_a_new_name_is_made_and_unlinked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel refuses the flags (EISDIR, as for a file system without O_TMPFILE)."""
    monkeypatch.setattr(scratch, "UNNAMED", os.O_DIRECTORY | os.O_RDWR)
    (tmp_path / "planted").symlink_to("/etc/passwd")
    with Place(str(tmp_path)).open() as where:
        fd = unnamed(where)
    try:
        assert sorted(os.listdir(tmp_path)) == ["planted"]
        assert os.fstat(fd).st_nlink == 0 and os.fstat(fd).st_size == 0
    finally:
        os.close(fd)

