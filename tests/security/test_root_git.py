"""Root never runs git with the agent's repository configuration (invariant 8): the git
that root needs (the repository at boot, the pre-commit chain's rewrite when the hooks
change) runs as the agent, so whatever the agent configured runs as the agent, never as
uid 0. The configuration is there at boot too, as a workspace on a volume keeps it."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tests.support.attack import Agent, agent_script, as_agent, hook

FILE_HOOK = 'echo "file hook: $(id -u) $DISCOBOT_CHANGED_FILES"'

# Each program the agent configures says which it is and who ran it.
EVIL = """#!/bin/sh
echo "{name} $(id -u)" >> {evidence}
{tail}
"""

CONFIGURE = """
    import json, os, subprocess, sys
    from tests.support.agent_side import call

    ws, tools, when = sys.argv[1], sys.argv[2], sys.argv[3]
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
    if when == "before":  # the workspace as the last container left it
        sys.exit(0)
    with open(f"{ws}/a.r", "a") as f:
        f.write("changed\\n")
    with open(f"{ws}/.discobot/hooks/50-pc.sh", "w") as f:  # root rewrites the chain
        f.write("#!/bin/sh\\n#---\\n# type: pre-commit\\n#---\\ntrue\\n")
    os.chmod(f"{ws}/.discobot/hooks/50-pc.sh", 0o755)
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
    hook(ws / ".discobot" / "hooks", "10-file.sh", FILE_HOOK, owner=agent,
         type="file", pattern="*.r")
    as_agent(agent, f"cd {ws} && echo one > a.r && git add -A && git commit -qm one")
    script = agent_script(CONFIGURE)
    as_agent(agent, f"{sys.executable} {script} {ws} {tools} before")
    init = boot(sys.executable, script, str(ws), str(tools), "during")
    assert init.wait(timeout=60) == 0, init.stderr
    assert init.stdout_lines == ['["10-file"]'], init.stderr  # the file hook did run
    ran = evidence.read_text().splitlines()
    assert [line for line in ran if line.endswith(" 0")] == [], ran
