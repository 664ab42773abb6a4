"""A service's log files (initd/process/svfiles.py): current rotated to current.1 … .N by
renames, never past (N+1) times max_bytes together, cut at a line's end where one is;
what is planted at current replaced, never written through; a directory that cannot be
written said once, retried, and never an exception for the logger."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from initd.process import svfiles
from initd.process.svfiles import Files


def files_in(path: Path) -> dict[str, int]:
    return {entry.name: entry.stat().st_size for entry in path.iterdir()}


def made(path: Path, max_bytes: int, backups: int) -> tuple[Files, list[str | None]]:
    said: list[str | None] = []
    return Files(str(path), max_bytes, backups, said.append), said


@pytest.mark.parametrize("backups", [0, 1, 3])
def test_rotation_keeps_the_files_under_their_caps(tmp_path: Path, backups: int) -> None:
    files, said = made(tmp_path, 1000, backups)
    line = b"0123456789" * 7 + b"\n"  # 71 bytes
    for _ in range(500):
        files.write(line * 3)
    files.close()
    sizes = files_in(tmp_path)
    assert set(sizes) == {"current", *(f"current.{k}" for k in range(1, backups + 1))}
    assert all(size <= 1000 for size in sizes.values())
    assert sum(sizes.values()) <= (backups + 1) * 1000
    # cut at lines' ends: every file holds whole lines, the newest ones
    for name in sizes:
        data = (tmp_path / name).read_bytes()
        assert data.endswith(b"\n") and set(data.split(b"\n")[:-1]) == {line[:-1]}
    assert said == []


def test_the_newest_lines_are_in_current_then_current_1(tmp_path: Path) -> None:
    files, _ = made(tmp_path, 20, 2)
    for n in range(10):
        files.write(f"line {n}\n".encode())  # 7 bytes each: two a file
    files.close()
    assert (tmp_path / "current").read_text() == "line 8\nline 9\n"
    assert (tmp_path / "current.1").read_text() == "line 6\nline 7\n"
    assert (tmp_path / "current.2").read_text() == "line 4\nline 5\n"


def test_a_line_longer_than_a_file_is_cut_at_the_cap(tmp_path: Path) -> None:
    files, _ = made(tmp_path, 100, 2)
    files.write(b"x" * 250)
    files.close()
    assert files_in(tmp_path) == {"current": 50, "current.1": 100, "current.2": 100}


def test_current_is_appended_to_across_starts(tmp_path: Path) -> None:
    for text in (b"one\n", b"two\n"):
        files, _ = made(tmp_path, 100, 1)
        files.write(text)
        files.close()
    assert (tmp_path / "current").read_bytes() == b"one\ntwo\n"


@pytest.mark.parametrize("planted", ["link", "fifo", "dir"])
def test_what_is_planted_at_current_is_replaced_not_written_through(
        tmp_path: Path, planted: str) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("not a log\n")
    logdir = tmp_path / "log"
    logdir.mkdir()
    current = logdir / "current"
    if planted == "link":
        current.symlink_to(target)
    elif planted == "fifo":
        os.mkfifo(current)
    else:
        current.mkdir()
    files, said = made(logdir, 100, 1)
    files.write(b"hello\n")
    files.close()
    assert target.read_text() == "not a log\n"
    assert current.is_file() and not current.is_symlink()
    assert current.read_bytes() == b"hello\n" and said == []


def test_a_directory_that_cannot_be_written_is_said_once_and_retried(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logdir = tmp_path / "gone"
    files, said = made(logdir, 100, 1)
    for _ in range(3):
        files.write(b"lost\n")
    assert len(said) == 1 and said[0] is not None and str(logdir) in said[0]
    logdir.mkdir()
    files.write(b"lost too\n")  # (before RETRY: not tried again)
    assert not (logdir / "current").exists()
    monkeypatch.setattr(svfiles.time, "monotonic", lambda: files.retry_at + 1)
    files.write(b"kept\n")
    files.close()
    assert said[1:] == [None]
    assert (logdir / "current").read_bytes() == b"kept\n"


def test_a_directory_planted_at_a_rotations_name_is_moved_aside(tmp_path: Path) -> None:
    (tmp_path / "current.2").mkdir()
    (tmp_path / "current.2" / "inside").write_text("kept\n")
    files, said = made(tmp_path, 10, 2)
    for n in range(4):
        files.write(b"line %d\n" % n)  # 7 bytes: one a file
    files.close()
    assert said == []
    assert (tmp_path / "current.2").read_bytes() == b"line 1\n"
    aside = [p for p in tmp_path.iterdir() if p.name.startswith(".current.2.")]
    assert len(aside) == 1 and (aside[0] / "inside").read_text() == "kept\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="cannot run here: another uid's file needs root")
def test_someone_elses_current_is_replaced_even_when_writable(tmp_path: Path) -> None:
    other = tmp_path / "theirs"
    other.write_text("theirs\n")
    other.chmod(0o666)
    os.chown(other, 4242, 4242)
    os.link(other, tmp_path / "current")
    files, said = made(tmp_path, 100, 1)
    files.write(b"mine\n")
    files.close()
    assert other.read_text() == "theirs\n" and said == []
    assert (tmp_path / "current").read_bytes() == b"mine\n"
    assert (tmp_path / "current").stat().st_uid == 0
