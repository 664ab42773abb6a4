"""The verbs an operator runs as root over the agent's files (invariant 8): ``initd
sessions --user AGENT`` reads the agent's session records, ``initd config
set-auto-commit`` writes the workspace's .autoagent/config.json. What the agent planted
there (links to root files, FIFOs, hard links) is neither followed, read into the output,
nor written through, and nothing hangs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.attack import GIT_ENV, Agent, Canary, as_agent

INITD = [sys.executable, "-m", "initd"]


def initd_as_root(*args: str, cwd: str = "/") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*INITD, *args], capture_output=True, text=True, env=GIT_ENV,
                          timeout=30, cwd=cwd)


def test_initd_sessions_as_root_follows_nothing_the_agent_planted(agent: Agent,
                                                                 canary: Canary) -> None:
    records = agent.state / "sessions"
    good = {"id": "good", "startTime": "2026-01-01T00:00:00Z", "status": "active"}
    as_agent(agent, f"mkdir -p {records} && echo '{json.dumps(good)}' > {records}/good.json"
                    f" && mkfifo {records}/good.events.jsonl"  # a FIFO: must not hang
                    f" && ln -s {canary.secret} {records}/linked.json"
                    f" && echo '{json.dumps({**good, 'id': 'other'})}' > {records}/other.json"
                    f" && ln -s {canary.secret} {records}/other.events.jsonl")
    try:
        out = initd_as_root("sessions", "--user", agent.name, "--json")
        assert out.returncode == 0, out.stderr
        ids = [r["id"] for r in json.loads(out.stdout)]  # (other tests' records too)
        assert "good" in ids and "other" in ids
        assert canary.token not in out.stdout + out.stderr
        assert canary.changes() == []
    finally:
        as_agent(agent, f"cd {records} && rm -f good.json good.events.jsonl linked.json "
                        "other.json other.events.jsonl")


def test_initd_config_as_root_never_writes_through_a_link(agent: Agent, ws: Path,
                                                          canary: Canary) -> None:
    as_agent(agent, f"ln -s {canary.sub} {ws}/.autoagent")
    out = initd_as_root("config", "set-auto-commit", "true", "--workspace", str(ws))
    assert out.returncode == 125, out.stdout + out.stderr
    assert "symbolic link" in out.stderr and len(out.stderr.splitlines()) == 1
    assert canary.changes() == []
    os.unlink(ws / ".autoagent")
    made = initd_as_root("config", "set-auto-commit", "true", "--workspace", str(ws))
    assert made.returncode == 0, made.stderr  # a real directory: written, the owner's
    config = ws / ".autoagent" / "config.json"
    assert (config.stat().st_uid, config.parent.stat().st_uid) == (agent.uid, agent.uid)
