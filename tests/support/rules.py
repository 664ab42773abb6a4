"""What the tests of Claude Code's ``if`` rules against the agent share
(tests/security/test_rule_rebinding.py, test_rule_gitcode.py): a line of bash run as the
agent (for real, the negative control that shows an attack works), a canary directory
the agent may delete, a repository with history and a remote to force-push to, the rule
as the hook service evaluates it, and initd as PID 1 answering ``initd emit pre_tool``
for a line before the agent's harness runs it."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from initd.events.claude.matchers import matcher
from tests.support.attack import Agent, as_agent

DENY = "cat >/dev/null; echo 'denied by the guard' >&2; exit 2"


def runs(rule: str, command: str) -> bool:
    """Whether a PreToolUse hook with ``if: rule`` runs for this Bash command."""
    return matcher("pre_tool", "Bash", rule, "/ws", "/home").matches(bash(command))


def bash(command: str) -> dict[str, Any]:
    return {"tool_name": "Bash", "tool_input": {"command": command}}


def deny_settings(ws: Path, rules: tuple[str, ...], owner: Agent | None = None) -> Path:
    """.claude/settings.json: a PreToolUse hook on Bash that denies, once per ``if``."""
    path = ws / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "if": rule, "command": DENY} for rule in rules]}]}}))
    if owner is not None:
        for made in (path.parent, path):
            os.chown(made, owner.uid, owner.gid)
    return path


def scratch(agent: Agent) -> Iterator[Path]:
    """For a fixture: a directory of the agent's outside the workspace (0755), removed
    afterwards: canaries and a remote repository go there."""
    path = Path(tempfile.mkdtemp(prefix="initd-atk-rules-"))
    os.chmod(path, 0o755)
    os.chown(path, agent.uid, agent.gid)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def canary(agent: Agent, base: Path, name: str = "canary") -> Path:
    """A directory of the agent's with a file in it: what an attack line deletes."""
    path = base / name
    as_agent(agent, f"mkdir -p {path} && echo keep > {path}/keep")
    return path


def history(agent: Agent, ws: Path, base: Path) -> str:
    """Two commits in ``ws``, pushed to a bare ``origin`` in ``base`` as main, then the
    last one amended (only a force push puts it there); the amended commit's id."""
    remote = base / "remote.git"
    as_agent(agent, f"git init -q --bare {remote} && cd {ws} && echo a > f && git add f "
                    "&& git commit -qm one && echo b >> f && git commit -qam two && "
                    f"git remote add origin {remote} && git push -q origin HEAD:main && "
                    "git commit -q --amend -m amended")
    return as_agent(agent, f"cd {ws} && git rev-parse HEAD").stdout.strip()


def remote_main(agent: Agent, base: Path) -> str:
    return as_agent(agent, f"git -C {base / 'remote.git'} rev-parse main").stdout.strip()


def run_line(agent: Agent, ws: Path, line: str, tty: bool = False) -> str:
    """``bash -c LINE`` as the agent in ``ws`` (under ``script``, a terminal, where git
    pages only to one); its output, for a message."""
    command = f"bash -c {shlex.quote(line)}"
    if tty:
        command = f"script -qec {shlex.quote(command)} /dev/null"
    out = as_agent(agent, f"cd {ws} && {command} </dev/null", check=False, timeout=30)
    return out.stdout + out.stderr


EMIT = """
    import json, os, subprocess, sys
    lines = json.loads(sys.argv[1])
    for line in lines:
        data = json.dumps({"tool_name": "Bash", "tool_input": {"command": line}})
        out = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data",
                              data], capture_output=True, text=True, timeout=60)
        if out.returncode == 0:  # allowed: the harness runs it, as Claude Code would
            subprocess.run(["bash", "-c", line], cwd=sys.argv[2], capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=30)
        print(json.dumps([line, out.returncode]), flush=True)
"""
