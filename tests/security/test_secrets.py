"""A hidden secret (DISCOBOT_SECRET, every --secret) never reaches a hook: also not the
pre-commit hooks the agent's own ``git commit`` runs, through initd or, when initd is
out of reach, through the chain's own fallback (invariant 4's sibling, promise 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from initd.hooks import precommit
from tests.support.attack import GIT_ENV, Agent, as_agent, hook

# It fails, so that the chain shows its output (a passing hook is quiet).
SHOW = 'env | grep -E "^(DISCOBOT_SECRET|MY_TOKEN|OTHER)="; echo "hook saw env"; exit 1'
SECRETS = {"DISCOBOT_SECRET": "disco-secret-value", "MY_TOKEN": "my-token-value",
           "OTHER": "other-value"}


def test_secrets_never_reach_precommit_hooks_of_the_agents_commit(
        boot, agent: Agent, ws: Path) -> None:
    hook(ws / ".discobot" / "hooks", "10-show.sh", SHOW, owner=agent, type="pre-commit")
    commit = (f"cd {ws} && echo x > f && git add f && git commit -qm x 2>&1; "
              "echo committed")
    os.environ.update(SECRETS)
    try:
        init = boot("sh", "-c", commit, more=("--secret", "MY_TOKEN", "--secret", "OTHER"))
        assert init.wait(timeout=60) == 0, init.stderr
    finally:
        for name in SECRETS:
            del os.environ[name]
    out = "\n".join(init.stdout_lines)
    assert "hook saw env" in out and "committed" in out, init.stderr
    for value in SECRETS.values():
        assert value not in out


def test_the_chains_fallback_strips_the_secrets_too(agent: Agent, ws: Path) -> None:
    """initd out of reach (say, the workspace mounted elsewhere): the script runs the
    hooks itself, and still without the secrets it was told of."""
    hook(ws / ".discobot" / "hooks", "10-show.sh", SHOW, owner=agent, type="pre-commit")
    out = subprocess.run([sys.executable, "-m", "initd", "precommit", "install",
                          "--workspace", str(ws), "--secret", "MY_TOKEN", "--secret", "OTHER"],
                         capture_output=True, text=True, env=GIT_ENV)
    assert out.returncode == 0, out.stderr
    script = ws / ".git" / "hooks" / "pre-commit"
    text = script.read_text()
    initd_line = next(line for line in text.splitlines() if line.startswith("initd="))
    script.write_text(text.replace(initd_line, "initd=/nonexistent/initd"))
    os.chown(script, agent.uid, agent.gid)
    secrets = " ".join(f"{k}={v}" for k, v in SECRETS.items())
    got = as_agent(agent, f"cd {ws} && echo x > f && git add f && "
                          f"env {secrets} git commit -qm x 2>&1", check=False)
    assert "hook saw env" in got.stdout
    for value in SECRETS.values():
        assert value not in got.stdout
    assert precommit.MARKER in script.read_text()
