"""Where initd keeps and reads things by default (initd/config/paths.py): the workspace's
hooks, and the control socket for root and for anyone else."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from initd.config import paths


def test_the_workspaces_hooks_are_in_its_discobot_folder() -> None:
    assert paths.workspace_hooks("/work/ws") == "/work/ws/.discobot/hooks"
    assert paths.workspace_hooks("/work/ws/") == "/work/ws/.discobot/hooks"


@pytest.mark.skipif(os.geteuid() != 0, reason="cannot run here: root's answer needs root")
def test_roots_socket_is_run_initd_whatever_the_environment(tmp_path: Path) -> None:
    assert paths.default_socket({"XDG_RUNTIME_DIR": str(tmp_path)}) == paths.DEFAULT_SOCKET
    assert paths.default_socket({}) == paths.DEFAULT_SOCKET


def test_anyone_else_uses_their_own_runtime_dir_else_one_of_theirs_in_tmp() -> None:
    """As root, the answer is asked of nobody (65534), in a process of theirs."""
    if os.geteuid() != 0:
        answer = paths.default_socket
        uid = os.geteuid()
    else:
        uid = 65534

        def answer(environ: dict[str, str]) -> str:
            code = "import sys; from initd.config import paths; print(paths.default_socket())"
            out = subprocess.run(
                ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                 sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                cwd="/", env={**environ, "PYTHONPATH": str(Path(paths.__file__).parents[2])})
            assert out.returncode == 0, out.stderr
            return out.stdout.strip()
    with tempfile.TemporaryDirectory(dir="/tmp") as base:
        os.chmod(base, 0o711)
        theirs = os.path.join(base, "run")
        os.mkdir(theirs)
        os.chown(theirs, uid, uid)
        assert answer({"XDG_RUNTIME_DIR": theirs}) == f"{theirs}/initd.sock"
        for runtime in ("", "relative/dir", "/nonexistent", "/"):  # "/": not theirs
            assert answer({"XDG_RUNTIME_DIR": runtime}) == f"/tmp/initd-{uid}/initd.sock", \
                runtime
