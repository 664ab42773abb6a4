"""The two calls of agentfs that take a path as named (initd/state/agentfs/byname.py): a
file read wherever its path leads, never a FIFO, device or directory, never past its
limit; a link at its end refused unless followed; and the control socket's group."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from initd.state.agentfs.byname import give_group, read_regular
from initd.state.agentfs.common import Unsafe


def test_a_regular_file_and_its_status(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    data, info = read_regular(str(path), 10)
    assert data == b"abc" and info.st_size == 3
    assert read_regular(str(path), 2)[0] == b"ab"  # cut at the limit
    with pytest.raises(Unsafe, match="over 2 bytes"):
        read_regular(str(path), 2, whole=True)


def test_a_link_is_followed_unless_told_not(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc")
    (tmp_path / "l").symlink_to(tmp_path / "f")
    assert read_regular(str(tmp_path / "l"), 10)[0] == b"abc"
    with pytest.raises(Unsafe, match="a symbolic link: not read"):
        read_regular(str(tmp_path / "l"), 10, follow=False)


@pytest.mark.parametrize("kind", ["fifo", "directory", "device", "socket"])
def test_never_anything_but_a_regular_file(tmp_path: Path, kind: str) -> None:
    path = tmp_path / kind
    held = None
    if kind == "fifo":
        os.mkfifo(path)  # opened non-blocking: never hangs
    elif kind == "directory":
        path.mkdir()
    elif kind == "socket":
        held = socket.socket(socket.AF_UNIX)
        held.bind(str(path))
    else:
        path = Path("/dev/null")
    try:
        with pytest.raises((Unsafe, OSError)) as raised:
            read_regular(str(path), 10)
        assert kind == "socket" or "not a regular file" in str(raised.value)
    finally:
        if held is not None:
            held.close()


def test_what_is_missing_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular(str(tmp_path / "none"), 10)


def test_the_sockets_group_is_the_name_itself(tmp_path: Path) -> None:
    sock = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as held:
        held.bind(str(sock))
        assert give_group(str(sock), os.getegid())
        assert sock.lstat().st_gid == os.getegid()
        other = tmp_path / "other"
        other.write_text("")
        (tmp_path / "l").symlink_to(other)
        before = other.stat().st_gid
        give_group(str(tmp_path / "l"), os.getegid())
        assert other.stat().st_gid == before  # a link's own group, never its target's
