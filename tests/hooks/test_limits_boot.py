"""Per-hook limits through a real boot (initd as PID 1): a hook's own ``limits:`` and the
image's ``hook_limits`` (initd.yaml) bite, each is reported as the limit it was, the
other hooks, the agent and initd go on; a bad ``limits:`` is named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.commands import options
from initd.config import settings
from initd.errors import InitdError
from initd.process import limits
from initd.supervisor.children import service_settings
from tests.hooks.support import ROOT_HOME, add_hook, forget_session
from tests.support.harness import run


@pytest.fixture
def workspace() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="initd-ws-"))
    path.chmod(0o755)
    yield path
    forget_session("limits")


@pytest.mark.slow
def test_limits_bite_and_are_reported_and_boot_goes_on(workspace: Path, tmp_path: Path
                                                      ) -> None:
    hooks = workspace / ".discobot" / "hooks"
    add_hook(hooks, "10-spin.sh", "while :; do :; done", type="session", limits={"cpu": 1})
    add_hook(hooks, "20-big.sh", f"head -c 3000000 /dev/zero > {workspace}/big",
             type="session")  # the image's file_size limit
    add_hook(hooks, "30-ok.sh", "echo fine", type="session")
    config = tmp_path / "initd.yaml"
    config.write_text("hook_limits:\n  file_size: 1M\n  cpu: 30\n")
    init = run(["--config", str(config), "--workspace", str(workspace), "--hooks-dir",
                str(tmp_path / "none"), "--session-id", "limits", "--no-service", "--",
                "sh", "-c", "echo agent-ran; exit 5"], timeout=60)
    assert init.code == 5, init.stderr  # the agent ran, after the hooks, with its own code
    assert init.stdout_lines == ["agent-ran"]
    with open(os.path.join(ROOT_HOME, ".discobot", "limits", "hooks", "status.json")) as f:
        status = json.load(f)["hooks"]
    assert status["10-spin"]["lastResult"] == "failure"
    assert status["10-spin"]["killedByLimit"] == "its cpu limit (1 s of CPU)"
    assert status["20-big"]["killedByLimit"] == "its file_size limit (1 MiB)"
    assert (workspace / "big").stat().st_size == 2**20
    assert status["30-ok"] == {**status["30-ok"], "lastResult": "success",
                               "killedByLimit": None}
    log = Path(status["10-spin"]["outputPath"]).read_text()
    assert "[initd: killed by its cpu limit (1 s of CPU)]" in log


def test_a_bad_limits_key_is_named_and_the_hook_never_runs(workspace: Path) -> None:
    hooks = workspace / ".discobot" / "hooks"
    add_hook(hooks, "10-bad.sh", f"touch {workspace}/ran", type="session",
             limits={"ram": "1G"})
    add_hook(hooks, "20-worse.sh", f"touch {workspace}/ran", type="session",
             limits={"memory": "lots"})
    out = subprocess.run([sys.executable, "-m", "initd", "hooks", "check", "--workspace",
                          str(workspace), "--hooks-dir", str(workspace / "none")],
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert "10-bad.sh" in out.stdout + out.stderr
    assert "limits: unknown ram (known: cpu, memory, processes, file_size)" in \
        out.stdout + out.stderr
    assert "limits: memory: expected bytes > 0, or a number with K, M, G or T, got " \
        "'lots'" in out.stdout + out.stderr
    init = run(["--workspace", str(workspace), "--hooks-dir", str(workspace / "none"),
                "--session-id", "limits", "--no-service", "--", "true"], timeout=60)
    assert init.code == 0
    assert not (workspace / "ran").exists()


def test_the_images_limits_reach_the_hook_service(tmp_path: Path) -> None:
    """The service reads its settings from the environment the supervisor gives it."""
    config = tmp_path / "initd.yaml"
    config.write_text("hook_limits: {cpu: 10, memory: 2G, processes: 300}\n")
    flags = options.parse(["--config", str(config), "--", "true"])
    mine = settings.load(flags, {})
    env = service_settings(mine, "s", None)
    assert env["INITD_HOOK_LIMITS"] == f"cpu=10,memory={2 * 2**30},processes=300"
    theirs = settings.load(options.parse(["--", "true"]), dict(env))
    assert theirs.hook_limits == mine.hook_limits == limits.Limits(
        cpu=10, memory=2 * 2**30, processes=300)


def test_bad_image_limits_name_the_file_and_the_key(tmp_path: Path) -> None:
    config = tmp_path / "initd.yaml"
    config.write_text("hook_limits: {cpu: forever}\n")
    with pytest.raises(InitdError) as bad:
        settings.load(options.parse(["--config", str(config), "--", "true"]), {})
    assert str(bad.value) == f"{config}: key 'hook_limits': cpu: expected a whole number " \
        "> 0, got 'forever'"
    with pytest.raises(InitdError) as bad:
        settings.load(options.parse(["--", "true"]), {"INITD_HOOK_LIMITS": "cpu"})
    assert str(bad.value) == "environment variable INITD_HOOK_LIMITS='cpu': expected " \
        "NAME=VALUE[,NAME=VALUE...], got 'cpu'"
