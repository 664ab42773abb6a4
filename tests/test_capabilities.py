"""Missing capabilities cost a feature and a line, never a container that cannot exit
(DESIGN invariant 10): initd as PID 1, as root without CAP_KILL (setpriv drops it from
the bounding set, as `--cap-drop KILL` does), over an agent of another uid."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.support.harness import UNSHARE, own_socket

SETPRIV = shutil.which("setpriv")


@pytest.fixture
def workspace(agent_user: pwd.struct_passwd) -> Iterator[Path]:
    """A workspace with hooks, so the hook service (as the agent) runs too."""
    path = Path(tempfile.mkdtemp(prefix="initd-caps-"))
    os.chmod(path, 0o755)
    (path / ".discobot" / "hooks").mkdir(parents=True)
    subprocess.run(["chown", "-R", f"{agent_user.pw_uid}:{agent_user.pw_gid}", str(path)],
                   check=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _agent_runs(root: int) -> bool:
    for process in psutil.Process(root).children(recursive=True):
        try:
            if process.cmdline() == ["sleep", "1000"]:
                return True
        except psutil.Error:
            continue  # gone while we looked
    return False


@pytest.mark.slow
@pytest.mark.skipif(SETPRIV is None, reason="setpriv (util-linux) is not installed")
def test_without_cap_kill_a_stop_still_ends_the_container(agent_user: pwd.struct_passwd,
                                                          workspace: Path) -> None:
    """It crashed in killpg while stopping the hook service, and PID 1 then waited for
    ever on processes it could not kill: `podman stop` had to KILL the container."""
    assert SETPRIV is not None
    init = subprocess.Popen(
        [*UNSHARE, SETPRIV, "--bounding-set", "-kill", "--inh-caps", "-kill", "--",
         sys.executable, "-m", "initd", "--user", agent_user.pw_name, "--grace", "1",
         "--workspace", str(workspace), "--session-id", f"caps-{os.getpid()}",
         "--hooks-dir", str(workspace / "none"), "--", "sleep", "1000"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "INITD_SOCKET": own_socket()}, cwd="/tmp")
    try:
        # booted: the agent (sleep 1000) runs, as the agent user
        deadline = time.monotonic() + 60
        while not _agent_runs(init.pid):
            assert init.poll() is None and time.monotonic() < deadline, init.communicate()
            time.sleep(0.05)
        [pid1] = psutil.Process(init.pid).children()  # (setpriv execs: this is initd)
        os.kill(pid1.pid, signal.SIGTERM)  # as `podman stop` does
        _, stderr = init.communicate(timeout=30)
    finally:
        if init.poll() is None:
            init.kill()
    text = stderr.decode(errors="replace")
    assert "Traceback" not in text, text
    assert "not allowed to signal its process group (no CAP_KILL?)" in text
    assert init.returncode == 128 + signal.SIGKILL, text
    subprocess.run(["pkill", "-KILL", "-u", agent_user.pw_name], capture_output=True)


@pytest.mark.skipif(SETPRIV is None, reason="setpriv (util-linux) is not installed")
@pytest.mark.parametrize("cap", ["chown", "fowner", "dac_override"])
def test_without_a_file_capability_boot_degrades_and_the_agent_runs(
        agent_user: pwd.struct_passwd, workspace: Path, cap: str) -> None:
    """No CHOWN once was a traceback and 125 at boot: root cannot give the state it makes
    in the agent's home to the agent. Now that costs the hooks' state, said in a line."""
    assert SETPRIV is not None
    hook = workspace / ".discobot" / "hooks" / "10-hi.sh"
    hook.write_text("#!/bin/sh\n#---\n# type: session\n#---\necho hi\n")
    hook.chmod(0o755)
    out = subprocess.run(
        [*UNSHARE, SETPRIV, "--bounding-set", f"-{cap}", "--inh-caps", f"-{cap}", "--",
         sys.executable, "-m", "initd", "--user", agent_user.pw_name, "--workspace",
         str(workspace), "--session-id", f"caps-{os.getpid()}", "--hooks-dir",
         str(workspace / "none"), "--", "sh", "-c", "echo agent ran; exit 3"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
        env={**os.environ, "INITD_SOCKET": own_socket()}, cwd="/tmp")
    assert "Traceback" not in out.stderr, out.stderr
    assert out.stdout.splitlines()[-1:] == ["agent ran"], out.stderr
    assert out.returncode == 3, out.stderr
    if cap == "chown":  # what it costs, said (the socket for the agent; its state)
        assert "no CAP_CHOWN?" in out.stderr, out.stderr
