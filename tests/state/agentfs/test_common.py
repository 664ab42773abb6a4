"""What every part of agentfs shares (initd/state/agentfs/common.py): a plain name only,
a read that stops at its limit, a chown root may be refused (said once)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from initd.state.agentfs import common


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "/etc", "a\0b", "../x"])
def test_only_a_plain_name(name: str) -> None:
    with pytest.raises(ValueError, match="not a plain file name"):
        common.check_name(name)


@pytest.mark.parametrize("name", ["a", ".hidden", "...", "a b", "a\nb", "é"])
def test_a_plain_name(name: str) -> None:
    common.check_name(name)


def test_a_read_stops_at_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    with open(path, "rb") as f:
        assert common.read_limited(f.fileno(), 10, "f") == b"x" * 10
    with open(path, "rb") as f:
        assert common.read_limited(f.fileno(), 4, "f", whole=False) == b"xxxx"
    with open(path, "rb") as f, pytest.raises(common.Unsafe) as raised:
        common.read_limited(f.fileno(), 9, str(path))
    assert str(raised.value) == f"{path}: over 9 bytes: not read"
    assert isinstance(raised.value, OSError)  # a failed write's handler handles it


def test_an_endless_file_costs_no_more_than_its_limit() -> None:
    with open("/dev/zero", "rb") as f:
        assert len(common.read_limited(f.fileno(), 5, "zero", whole=False)) == 5
    with open("/dev/zero", "rb") as f, pytest.raises(common.Unsafe):
        common.read_limited(f.fileno(), 3 << 20, "zero")


def test_a_refused_chown_is_remembered_and_said_once() -> None:
    """Without CAP_CHOWN a chown is refused, never raised, and named once (as root, the
    case runs as nobody, in a directory of theirs)."""
    code = textwrap.dedent("""
        import os, sys, tempfile
        from initd.state.agentfs import common
        made = os.path.join(tempfile.mkdtemp(), "made")
        open(made, "w").close()
        fd = os.open(made, os.O_RDONLY)
        common.fchown(fd, (0, 0))
        common.fchown(fd, (0, 0))
        print(common.refused_chowns() == [made], common.refused_chowns())
        os.close(fd)
        os.unlink(made)
        os.rmdir(os.path.dirname(made))
    """)
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] \
        if os.geteuid() == 0 else []
    out = subprocess.run([*prefix, sys.executable, "-c", code], capture_output=True,
                         text=True, timeout=60, cwd="/", env={
                             "PATH": "/usr/bin:/bin", "TMPDIR": "/tmp",
                             "PYTHONPATH": str(Path(common.__file__).parents[3])})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "[]"]
