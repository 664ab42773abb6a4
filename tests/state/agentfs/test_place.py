"""Where a directory of agentfs is (initd/state/agentfs/place.py): walked to from a base
root trusts, one component at a time, never through a link; what is missing made (and
the owner's); a base the agent may name checked for its owner; a directory an operator
names walked from the deepest point only root can have made."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from initd.state.agentfs.common import Unsafe
from initd.state.agentfs.place import Place, below

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0,
                               reason="cannot run here: files of another user need root")


def test_a_walk_makes_what_is_missing(tmp_path: Path) -> None:
    place = Place(str(tmp_path), ("a", "b"))
    with pytest.raises(FileNotFoundError):
        place.open()
    with place.open(create=True) as made:
        assert made.path == str(tmp_path / "a" / "b")
    assert (tmp_path / "a" / "b").is_dir()
    assert place.child("c").parts == ("a", "b", "c") and place.path == made.path


def test_a_link_on_the_way_is_refused_never_followed(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "a").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(Unsafe, match="is a symbolic link or not a directory"):
        Place(str(tmp_path), ("a", "b")).open(create=True)
    assert list((tmp_path / "elsewhere").iterdir()) == []
    (tmp_path / "file").write_text("")
    with pytest.raises(Unsafe):
        Place(str(tmp_path), ("file",)).open()


@pytest.mark.parametrize("name", ["..", ".", "a/b", ""])
def test_a_part_is_a_plain_name(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError):
        Place(str(tmp_path), (name,)).open(create=True)


def test_a_base_the_agent_may_name_is_never_followed_nor_made(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    me = os.geteuid()
    with pytest.raises(Unsafe, match="symbolic link"):
        Place(str(tmp_path / "link"), base_uid=me).open()
    with pytest.raises(FileNotFoundError):
        Place(str(tmp_path / "none"), base_uid=me).open(create=True)
    assert not (tmp_path / "none").exists()
    with pytest.raises(Unsafe, match=f"belongs to uid {me}, not to uid {me + 1}"):
        Place(str(tmp_path / "real"), base_uid=me + 1).open()


@ROOT_ONLY
def test_what_root_makes_on_the_way_is_the_owners(tmp_path: Path) -> None:
    Place(str(tmp_path), ("a", "b"), (65534, 65534)).open(create=True).close()
    assert (tmp_path / "a").stat().st_uid == (tmp_path / "a" / "b").stat().st_uid == 65534


@ROOT_ONLY
def test_a_named_directory_is_walked_from_where_only_root_can_have_made_it() -> None:
    with tempfile.TemporaryDirectory(dir="/tmp") as top:  # root's, 0700, in sticky /tmp
        theirs = Path(top, "theirs")
        theirs.mkdir()
        os.chmod(top, 0o755)
        os.chown(theirs, 65534, 65534)
        place = Place.named(str(theirs / "state"))
        assert (place.base, place.parts) == (top, ("theirs", "state"))
        assert Place.named("/usr/share").parts == ()  # root's all the way: one base


def test_below_makes_a_directory_for_its_owner_never_through_a_link(tmp_path: Path) -> None:
    me = (os.geteuid(), os.getegid())
    with Place(str(tmp_path)).open() as top:
        with below(top, "mine", me, 0o750) as made:
            assert made.path == str(tmp_path / "mine")
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
        (tmp_path / "file").write_text("")
        os.mkfifo(tmp_path / "fifo")
        for planted in ("link", "file", "fifo"):
            with pytest.raises(Unsafe, match=f"{tmp_path / planted} is a symbolic link or "
                                             "not a directory"):
                below(top, planted, me, 0o750)
    assert (tmp_path / "mine").stat().st_mode & 0o777 == 0o750
    assert (tmp_path / "link").is_symlink() and (tmp_path / "elsewhere").stat().st_mode \
        & 0o777 != 0o750


@ROOT_ONLY
def test_below_gives_roots_directory_to_the_owner_and_refuses_anyone_elses(
        tmp_path: Path) -> None:
    (tmp_path / "roots").mkdir()
    (tmp_path / "theirs").mkdir()
    os.chown(tmp_path / "theirs", 4242, 4242)
    with Place(str(tmp_path)).open() as top:
        below(top, "roots", (4343, 4343), 0o750).close()
        with pytest.raises(Unsafe, match="belongs to uid 4242, not to root or uid 4343"):
            below(top, "theirs", (4343, 4343), 0o750)
    info = (tmp_path / "roots").stat()
    assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (4343, 4343, 0o750)
    assert (tmp_path / "theirs").stat().st_mode & 0o777 != 0o750
