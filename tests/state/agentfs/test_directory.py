"""An open directory of agentfs (initd/state/agentfs/directory.py): every call relative to
its descriptor; a name never followed if a link; a file read only if a regular one of
the owner's; a write a new file renamed into place; an append never into a link or
another's file; a lock that moves aside what was planted. The attacks as the agent:
tests/security/test_agentfs.py."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from initd.state.agentfs.common import Unsafe
from initd.state.agentfs.directory import Dir
from initd.state.agentfs.place import Place

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0,
                               reason="cannot run here: files of another user need root")
NOBODY = (65534, 65534)


def opened(tmp_path: Path, owner: tuple[int, int] | None = None) -> Dir:
    return Place(str(tmp_path), owner=owner).open()


def test_a_write_replaces_atomically_and_never_through_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("root's")
    (tmp_path / "state.json").symlink_to(victim)
    with opened(tmp_path) as here:
        here.write("state.json", b"new", 0o640)
        assert here.read("state.json", 10) == b"new"
    assert victim.read_text() == "root's"  # the link was replaced, not written through
    assert oct((tmp_path / "state.json").stat().st_mode & 0o777) == "0o640"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp


def test_a_read_refuses_a_link_a_fifo_and_a_huge_file(tmp_path: Path) -> None:
    (tmp_path / "target").write_text("secret")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "big").write_bytes(b"x" * 100)
    with opened(tmp_path) as here:
        assert here.read("missing", 10) is None
        for name, said in [("link", "a symbolic link: not read"),
                           ("fifo", "not a regular file"), ("big", "over 10 bytes")]:
            with pytest.raises(Unsafe, match=said):
                here.read(name, 10)
        assert here.read("big", 10, whole=False) == b"x" * 10


@ROOT_ONLY
def test_another_owners_file_is_not_read_unless_anyone_may(tmp_path: Path) -> None:
    (tmp_path / "roots").write_text("x")
    with opened(tmp_path, NOBODY) as here:
        with pytest.raises(Unsafe, match="belongs to uid 0, not to uid 65534"):
            here.read("roots", 10)
        assert here.read("roots", 10, anyone=True) == b"x"


@ROOT_ONLY
def test_what_root_makes_is_the_owners(tmp_path: Path) -> None:
    with opened(tmp_path, NOBODY) as here:
        here.write("w", b"1")
        here.append("a", b"line\n")
        here.mkdir("d")
        here.symlink("w", "l")
        with here.create("c") as out:
            out.write(b"log")
        os.close(here.lock("lock"))
    for name in ("w", "a", "d", "l", "c", "lock"):
        assert (tmp_path / name).lstat().st_uid == 65534, name
    assert os.readlink(tmp_path / "l") == "w"


def test_an_append_is_one_write_never_into_a_link(tmp_path: Path) -> None:
    (tmp_path / "target").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    with opened(tmp_path) as here:
        here.append("log", b"a\n")
        here.append("log", b"b\n", sync=True)
        assert (tmp_path / "log").read_bytes() == b"a\nb\n"
        with pytest.raises(OSError):
            here.append("link", b"x")
        os.mkfifo(tmp_path / "fifo")
        with pytest.raises(OSError):  # never blocks on a FIFO, never writes one
            here.append("fifo", b"x")
    assert (tmp_path / "target").read_text() == ""


def test_a_lock_moves_aside_what_was_planted(tmp_path: Path) -> None:
    (tmp_path / "target").write_text("root's")
    (tmp_path / ".lock").symlink_to(tmp_path / "target")
    with opened(tmp_path) as here:
        fd = here.lock(".lock")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            assert not (tmp_path / ".lock").is_symlink()
        finally:
            os.close(fd)
        os.unlink(tmp_path / ".lock")
        os.mkfifo(tmp_path / ".lock")
        os.close(here.lock(".lock"))
        assert (tmp_path / ".lock").is_file()
    assert (tmp_path / "target").read_text() == "root's"


def test_remove_rename_move_names_and_links(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    with opened(tmp_path) as here, Place(str(tmp_path / "sub")).open() as sub:
        here.write("a", b"1")
        here.rename("a", "b")
        here.move("b", sub, "c")
        assert (tmp_path / "sub" / "c").read_bytes() == b"1"
        here.symlink("/etc/passwd", "l")
        assert here.readlink("l") == ("/etc/passwd", os.geteuid())
        assert sorted(here.names(10)) == [("l", True), ("sub", False)]
        with pytest.raises(Unsafe, match="over 1 entries"):
            here.names(1)
        here.remove("l")
        here.remove("missing")
        (tmp_path / "planted").mkdir()
        here.remove("planted")  # a directory the agent put there: moved aside
        assert not (tmp_path / "planted").exists()
        assert here.mtime_ns("sub") is not None and here.mtime_ns("none") is None
        with pytest.raises(ValueError):
            here.write("../escape", b"x")
    assert not (tmp_path.parent / "escape").exists()
