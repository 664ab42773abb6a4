"""What the agent writes is validated before root acts on it: only the exact ``run_as:
root`` runs as root (``run_as: ""`` is an error, not the agent's default), and a
session id cannot lead out of ``~/.discobot``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.attack import GIT_ENV, Agent, boot_args, hook


@pytest.mark.parametrize("value", ["", None, "Root", "ROOT", 0, "users"])
def test_run_as_takes_exactly_root_or_user(agent: Agent, ws: Path, image: str,
                                           value: object) -> None:
    path = ws / ".discobot" / "hooks" / "10-x.sh"
    path.write_text(f"#!/bin/sh\n#---\n# type: session\n# run_as: "
                    f"{'' if value is None else repr(value) if value == '' else value}\n"
                    "#---\ntrue\n")
    path.chmod(0o755)
    out = subprocess.run([sys.executable, "-m", "initd", "hooks", "check", "--workspace",
                          str(ws), "--hooks-dir", image], capture_output=True, text=True,
                         env=GIT_ENV)
    assert out.returncode == 1, out.stdout
    assert f"{path}: run_as: expected" in out.stdout


@pytest.mark.parametrize("session", ["../../escaped", "a/b", "..", ".", "x\ny", "-x",
                                     "a" * 300])
def test_a_session_id_cannot_lead_out_of_the_state_directory(initd, agent: Agent, ws: Path,
                                                             image: str, session: str) -> None:
    hook(ws / ".discobot" / "hooks", "10-x.sh", "true", owner=agent, type="session")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("INITD_")},
           "SESSION_ID": session}
    args = boot_args(agent, ws, "ignored", image)
    args[args.index("--session-id"):args.index("--session-id") + 2] = []
    init = initd([*args, "--", "true"], env=env)
    assert init.wait(timeout=30) == 125, init.stderr
    # one line says what to fix (the rest is the verbose JSON log of PID 1)
    [line] = [line for line in init.stderr.splitlines() if not line.startswith("{")]
    assert line.startswith("initd: ") and "SESSION_ID" in line and "session id" in line
    assert not os.path.exists(os.path.join(agent.home, "escaped"))
    assert not os.path.exists(agent.state / "a")
