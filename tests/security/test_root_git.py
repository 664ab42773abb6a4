"""Root never runs git with the agent's repository configuration (invariant 8): the git
that root needs (the files a ``run_as: root`` file hook gets, the repository at boot)
runs as the agent, so whatever the agent configured runs as the agent, never as uid 0."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tests.support.attack import Agent, agent_script, as_agent, hook

ROOT_FILE_HOOK = 'echo "root file hook: $(id -u) $DISCOBOT_CHANGED_FILES"'

# Each program the agent configures says which it is and who ran it.
EVIL = """#!/bin/sh
echo "{name} $(id -u)" >> {evidence}
{tail}
"""

CONFIGURE = """
    import json, os, subprocess, sys
    from tests.support.agent_side import call

    ws, tools = sys.argv[1], sys.argv[2]
    def git(*args):
        subprocess.run(["git", "-C", ws, *args], check=True)
    git("config", "core.fsmonitor", f"{tools}/fsmonitor")
    git("config", "core.hooksPath", f"{tools}/hooks")
    git("config", "filter.evil.clean", f"{tools}/clean")
    git("config", "filter.evil.smudge", f"{tools}/clean")
    git("config", "diff.external", f"{tools}/extdiff")
    git("config", "core.sshCommand", f"{tools}/ssh")
    for name in ("diff", "ls-files", "rev-parse", "status"):
        git("config", f"alias.{name}", f"!{tools}/alias")
    with open(f"{ws}/.gitattributes", "a") as f:
        f.write("* filter=evil diff=evil\\n")
    git("config", "diff.evil.command", f"{tools}/extdiff")
    with open(f"{ws}/a.r", "a") as f:
        f.write("changed\\n")
    code, turn = call("POST", "/v1/turn", {"trigger": "user"})
    print(json.dumps([r["hookId"] for r in turn["results"]]), flush=True)
"""


def test_the_agents_git_config_never_runs_as_root(boot, agent: Agent, ws: Path) -> None:
    tools = Path(tempfile.mkdtemp(prefix="initd-atk-git-"))
    os.chmod(tools, 0o755)
    evidence = tools / "evidence"
    evidence.touch()
    os.chmod(evidence, 0o666)
    (tools / "hooks").mkdir(mode=0o755)
    for name, tail in (("fsmonitor", ""), ("clean", "cat"), ("extdiff", ""), ("ssh", ""),
                       ("alias", ""), ("hooks/post-index-change", ""),
                       ("hooks/pre-commit", "")):
        path = tools / name
        path.write_text(EVIL.format(name=name, evidence=evidence, tail=tail))
        path.chmod(0o755)
    hook(ws / ".discobot" / "hooks", "10-root.sh", ROOT_FILE_HOOK, owner=agent,
         type="file", pattern="*.r", run_as="root")
    as_agent(agent, f"cd {ws} && echo one > a.r && git add -A && git commit -qm one")
    init = boot(sys.executable, agent_script(CONFIGURE), str(ws), str(tools))
    assert init.wait(timeout=60) == 0, init.stderr
    assert init.stdout_lines == ['["10-root"]'], init.stderr  # root's hook did run
    ran = evidence.read_text().splitlines()
    assert [line for line in ran if line.endswith(" 0")] == [], ran
