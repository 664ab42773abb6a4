"""docs/cli.md, "Exit codes": the agent's fate is the container's exit code (dumb-init's and
tini's cases)."""

from __future__ import annotations

import os
import signal
import stat

import pytest

from tests.support.harness import run


@pytest.mark.parametrize("code", [0, 1, 2, 32, 64, 127, 254, 255])
def test_exit_code_passes_through_as_pid1(code: int) -> None:
    init = run(["--", "sh", "-c", f"exit {code}"])
    assert init.code == code, init.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGKILL])
def test_killed_by_signal_is_128_plus_n(sig: int) -> None:
    init = run(["--", "sh", "-c", f"kill -{int(sig)} $$"])
    assert init.code == 128 + sig, init.stderr


def test_exit_code_passes_through_as_subreaper() -> None:
    assert run(["--", "sh", "-c", "exit 42"], pidns=False).code == 42


def test_remap_exit_like_tini_e() -> None:
    init = run(["--remap-exit", "143:0", "--remap-exit", "3:7", "--", "sh", "-c", "exit 3"])
    assert init.code == 7
    assert run(["--remap-exit", "143:0", "--", "sh", "-c", "kill $$"]).code == 0
    # a code that is not remapped passes unchanged
    assert run(["--remap-exit", "143:0", "--", "sh", "-c", "exit 5"]).code == 5


def test_remap_exit_from_environment() -> None:
    env = {**os.environ, "INITD_REMAP_EXIT": "9:0, 10:1"}
    assert run(["--", "sh", "-c", "exit 9"], env=env).code == 0
    assert run(["--", "sh", "-c", "exit 10"], env=env).code == 1


def test_missing_command_is_127_with_message() -> None:
    """Exactly tini's one line, whatever the log format (it once was a JSON log line)."""
    init = run(["--", "/doesnotexist"])
    assert init.code == 127
    assert init.stderr.splitlines() == ["initd: /doesnotexist: No such file or directory"]


def test_command_not_on_path_is_127() -> None:
    init = run(["--", "no-such-command-anywhere"])
    assert init.code == 127
    assert "no-such-command-anywhere: No such file or directory" in init.stderr


def test_not_executable_is_126(tmp_path: os.PathLike[str]) -> None:
    script = os.path.join(tmp_path, "script.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(script, stat.S_IRUSR | stat.S_IWUSR)
    init = run(["--", script])
    assert init.code == 126
    assert "Permission denied" in init.stderr


def test_directory_as_command_is_126(tmp_path: os.PathLike[str]) -> None:
    assert run(["--", str(tmp_path)]).code == 126


def test_a_directory_that_is_also_the_cwd_is_blamed_as_the_command(
        tmp_path: os.PathLike[str]) -> None:
    """`initd /tmp` from /tmp once said "cannot enter working directory /tmp"."""
    init = run(["--", str(tmp_path)], cwd=str(tmp_path))
    assert init.code == 126
    assert init.stderr.splitlines() == [f"initd: {tmp_path}: Is a directory"]


@pytest.mark.parametrize(("cmd", "hint"), [
    ("hooks", "initd's verbs come first"),
    ("--version", "podman run --entrypoint initd IMAGE --version"),
])
def test_a_command_not_found_that_was_meant_for_initd_gets_a_hint(cmd: str,
                                                                  hint: str) -> None:
    init = run(["-v", "--", cmd] if cmd != "--version" else ["--", cmd])
    assert init.code == 127
    [line] = [line for line in init.stderr.splitlines() if line.startswith("initd: ")]
    assert line.startswith(f"initd: {cmd}: No such file or directory (hint: ") and hint in line


def test_a_killed_supervisor_is_said_once_and_leaves_nothing(initd) -> None:  # type: ignore[no-untyped-def]
    """kill -9 of the supervisor (the OOM killer, say) ended the container with 137 and
    not a word; now one line says what happened, and the sweep stops the agent."""
    import psutil

    from tests.support.harness import wait_for

    init = initd(["--", "sleep", "1000"])
    agent = wait_for(lambda: next((p for p in init.descendants() if p.name() == "sleep"),
                                  None), what="the agent")
    [supervisor] = psutil.Process(init.init_pid).children()
    supervisor.kill()
    assert init.wait() == 128 + signal.SIGKILL
    assert "initd: initd's own supervisor was killed by SIGKILL" in init.stderr
    assert not agent.is_running() or agent.status() == psutil.STATUS_ZOMBIE


@pytest.mark.slow
@pytest.mark.parametrize("pidns", [True, False], ids=["pid1", "subreaper"])
def test_a_closed_stderr_never_costs_the_agents_exit_code(pidns: bool) -> None:
    """A log collector that went away: the supervisor died of EPIPE at its first log line
    and `--restart on-failure` ended with 1, not the agent's 7."""
    import subprocess
    import sys

    from tests.support.harness import UNSHARE

    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will ever read initd's stderr
    try:
        out = subprocess.run(
            [*(UNSHARE if pidns else []), sys.executable, "-m", "initd", "-vv", "--restart",
             "on-failure", "--max-restarts", "1", "--restart-window", "60", "--", "sh", "-c",
             "exit 7"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=write_end,
            timeout=60, cwd="/tmp")
    finally:
        os.close(write_end)
    assert out.returncode == 7
