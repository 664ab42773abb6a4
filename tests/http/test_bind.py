"""The control API's listening socket (initd/http/bind.py): born 0660, never in place of
a live socket or of anything but one a crash left, and, for anyone but root, only in a
directory of theirs no one else could have made first."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from initd.errors import InitdError
from initd.http import bind


def test_born_0660_and_listening(tmp_path: Path) -> None:
    path = tmp_path / "run" / "initd.sock"
    with bind.listen(str(path)) as server:
        info = path.lstat()
        assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o660
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(str(path))
            conn, _ = server.accept()
            conn.close()


def test_a_socket_a_crash_left_is_replaced_a_live_one_never(tmp_path: Path) -> None:
    path = str(tmp_path / "initd.sock")
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(path)
    stale.close()  # a crash: the file stays, no one listens
    with bind.listen(path), pytest.raises(InitdError, match="is in use"):
        bind.listen(path)
    assert Path(path).exists()


@pytest.mark.parametrize("kind", ["file", "directory", "link"])
def test_anything_else_at_the_path_is_an_error_never_deleted(tmp_path: Path,
                                                             kind: str) -> None:
    path = tmp_path / "initd.sock"
    if kind == "file":
        path.write_text("mine")
    elif kind == "directory":
        path.mkdir()
    else:
        (tmp_path / "target").write_text("x")
        path.symlink_to(tmp_path / "target")
    with pytest.raises(InitdError, match="exists and is not a socket"):
        bind.listen(str(path))
    assert os.path.lexists(path)


def test_not_root_only_in_a_directory_no_one_else_could_have_made() -> None:
    """As nobody (65534), in a process of theirs: a directory others may write (not
    sticky) is refused; one of theirs, 0700, is fine."""
    code = textwrap.dedent("""
        import os, tempfile
        from initd.errors import InitdError
        from initd.http import bind
        base = tempfile.mkdtemp()
        loose = os.path.join(base, "loose")
        os.mkdir(loose)
        os.chmod(loose, 0o777)
        try:
            bind.listen(os.path.join(loose, "s.sock"))
            print("bound")
        except InitdError as err:
            print("refused" if "that only its owner may write to" in str(err) else err)
        bind.listen(os.path.join(base, "own", "s.sock")).close()
        print(oct(os.stat(os.path.join(base, "own")).st_mode & 0o777))
        import shutil; shutil.rmtree(base)
    """)
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] \
        if os.geteuid() == 0 else []
    out = subprocess.run([*prefix, sys.executable, "-c", code], capture_output=True,
                         text=True, timeout=60, cwd="/",
                         env={"PATH": "/usr/bin:/bin", "TMPDIR": "/tmp",
                              "PYTHONPATH": str(Path(bind.__file__).parents[2])})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["refused", "0o700"]
