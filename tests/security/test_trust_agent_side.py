"""Under ``--trust`` the store is root's alone (0600, in a 0700 directory), so the agent's
own processes that run workspace hooks ask for a verdict instead of reading it: the
pre-commit chain its ``git commit`` runs, and its ``initd hooks run``, ask the hook
service (``POST /v1/trust``), which asks root. An approved hook runs; one the agent
changed since is refused, which for a pre-commit hook means the commit is refused (a
guard fails closed); and nothing the agent sends there approves anything."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.attack import GIT_ENV, Agent, agent_script, hook
from tests.support.harness import _clean_env

COMMIT = """
    import json, os, subprocess, sys
    from tests.support.agent_side import call
    ws = sys.argv[1]
    def commit(name):
        with open(os.path.join(ws, name), "w") as f:
            f.write(name)
        subprocess.run(["git", "-C", ws, "add", name], check=True)
        out = subprocess.run(["git", "-C", ws, "commit", "-qm", name], capture_output=True,
                             text=True)
        return [out.returncode, out.stderr]
    said = {"approved": commit("a.txt")}
    with open(os.path.join(ws, ".discobot/hooks/50-pc.sh"), "a") as f:
        f.write("echo edited\\n")
    said["edited"] = commit("b.txt")
    # asking the service directly approves nothing: a forged digest, garbage
    said["forged"] = call("POST", "/v1/trust", {"key": "x", "digest": "0" * 64})
    said["garbage"] = call("POST", "/v1/trust", {"key": ["x"], "digest": 1})[0]
    print(json.dumps(said), flush=True)
"""


@pytest.fixture
def store() -> Iterator[Path]:
    top = Path(tempfile.mkdtemp(prefix="initd-trust-store-"))
    yield top / "trust.json"
    shutil.rmtree(top, ignore_errors=True)


def test_the_agents_commit_runs_approved_pre_commit_hooks_only(
        boot, agent: Agent, ws: Path, image: str, store: Path) -> None:
    ran = ws / "pc-ran"
    hook(ws / ".discobot" / "hooks", "50-pc.sh", f"echo ran >> {ran}", owner=agent,
         type="pre-commit")
    approve = subprocess.run([sys.executable, "-m", "initd", "hooks", "trust", "--workspace",
                              str(ws), "--hooks-dir", image, "--user", agent.name,
                              "--trust-file", str(store)], capture_output=True, text=True,
                             timeout=60, env=GIT_ENV, cwd="/")
    assert approve.returncode == 0, approve.stderr
    env = {**_clean_env(), "INITD_TRUST": "1", "INITD_TRUST_FILE": str(store)}
    init = boot(sys.executable, agent_script(COMMIT), str(ws), env=env)
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    said = json.loads(init.stdout_lines[-1])
    assert said["approved"][0] == 0, said
    assert ran.read_text() == "ran\n"  # it ran once: for the approved commit only
    assert said["edited"][0] != 0 and "not approved as it is now" in said["edited"][1]
    assert said["forged"] == [200, {"trusted": False, "why": said["forged"][1]["why"]}]
    assert said["garbage"] == 400
    assert os.stat(store).st_mode & 0o077 == 0
