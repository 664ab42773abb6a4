"""The surfaces Claude Code's current reference opened (issue 37), attacked by the agent:
initd booted as PID 1 with ``--user``, the agent's own command calling ``initd emit --from
claude`` as Claude Code's hook would, and root's canary proving what root did not do.

- CLAUDE_ENV_FILE: Claude Code gives its SessionStart, Setup, CwdChanged and FileChanged
  hooks a file to append ``export`` lines to (https://code.claude.com/docs/en/hooks,
  "Persist environment variables", the revision of 2026-08-22). The agent names that
  file: initd passes it on to the hooks, which run as the agent, and never opens it
  itself, so a path (or a link) to a file of root's gets nothing.
- ``?env=`` (how emit passes the variable on): only the names Claude Code's wire passes
  for the event reach a hook, never BASH_ENV, LD_PRELOAD or PATH (invariant 4).
- PermissionRequest ignores exit 2 ("Exit code 2 isn't honored for this event"): a guard
  initd cannot read must still answer Claude Code's way, a decision object that denies.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.attack import Agent, Canary, agent_script

pytestmark = pytest.mark.timeout(120)

EMIT = """
    import json, os, subprocess, sys
    for env, payload in json.loads(sys.argv[1]):
        out = subprocess.run([sys.executable, "-m", "initd", "emit", "--from", "claude"],
                             input=json.dumps(payload), capture_output=True, text=True,
                             timeout=100, env={**os.environ, **env})
        print(json.dumps([out.returncode, out.stdout, out.stderr[-2000:]]), flush=True)
"""
POST = """
    import json, sys
    from tests.support.agent_side import call
    for path, payload in json.loads(sys.argv[1]):
        code, outcome = call("POST", path, payload)
        print(json.dumps([code, [r["status"] for r in outcome["results"]]]), flush=True)
"""


@pytest.fixture
def evidence(agent: Agent) -> Iterator[Path]:
    """A directory of the agent's own (0700): where its hooks may write."""
    path = Path(tempfile.mkdtemp(prefix="initd-atk-claude-"))
    os.chown(path, agent.uid, agent.gid)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def settings(ws: Path, agent: Agent, hooks: dict[str, Any] | str) -> None:
    """The workspace's .claude/settings.json, the agent's."""
    path = ws / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(hooks if isinstance(hooks, str) else json.dumps({"hooks": hooks}))
    for made in (path.parent, path):
        os.chown(made, agent.uid, agent.gid)


def event(name: str, ws: Path, **fields: Any) -> dict[str, Any]:
    return {"session_id": "s1", "transcript_path": "/nowhere.jsonl", "cwd": str(ws),
            "hook_event_name": name, **fields}


def test_claude_env_file_never_reaches_a_file_of_roots(boot, agent: Agent, ws: Path,
                                                       canary: Canary, evidence: Path) -> None:
    """The agent, as Claude Code would, hands `initd emit --from claude` a CLAUDE_ENV_FILE:
    root's 0600 secret, root's 0644 file, a link of its own to that file, and (the
    control) a file of its own. The workspace's SessionStart hook appends to it. Only the
    agent's own file gets the line; root's files are as they were. Before initd passed
    CLAUDE_ENV_FILE on (0a989ad), the control failed: no hook had the variable."""
    link = evidence / "link.sh"
    link.symlink_to(canary.victim)
    own = evidence / "own.sh"
    settings(ws, agent, {"SessionStart": [{"hooks": [{"type": "command", "command":
        "cat >/dev/null; echo 'export FROM_HOOK=1' >> \"$CLAUDE_ENV_FILE\""}]}]})
    targets = [str(canary.secret), str(canary.victim), str(link), str(own)]
    runs = [[{"CLAUDE_ENV_FILE": path}, event("SessionStart", ws, source="startup")]
            for path in targets]
    init = boot(sys.executable, agent_script(EMIT), json.dumps(runs))
    assert init.wait(timeout=100) == 0, init.stderr
    answers = [json.loads(line) for line in init.stdout_lines]
    assert [code for code, _, _ in answers] == [0] * len(targets), answers
    assert canary.changes() == []
    assert own.read_text() == "export FROM_HOOK=1\n", answers


def query(*entries: tuple[str, object]) -> str:
    return "&".join(f"env={name}%3D{value}" for name, value in entries)


def test_the_env_channel_passes_claudes_variable_alone(boot, agent: Agent, ws: Path,
                                                      evidence: Path) -> None:
    """The agent calls the API itself, as emit does, with `?env=` entries of its choosing:
    BASH_ENV (bash runs it before the hook's command), LD_PRELOAD, PATH (a fake `ls`), and
    CLAUDE_ENV_FILE on an event whose hooks the reference does not give it (PreToolUse).
    None reaches a hook's environment; CLAUDE_ENV_FILE on SessionStart does (the control).
    Without the service's filter (passed_on), BASH_ENV ran the agent's script and PATH
    was the hook's (bash was not found): checked by taking the filter out."""
    pwned = evidence / "pwned"
    evil = evidence / "evil.sh"
    evil.write_text(f"/usr/bin/touch {pwned}\n")
    fake = evidence / "bin"
    fake.mkdir()
    (fake / "ls").write_text(f"#!/bin/sh\n/usr/bin/touch {pwned}\n")
    (fake / "ls").chmod(0o755)
    for made in (evil, fake, fake / "ls"):
        os.chown(made, agent.uid, agent.gid)
    record = f"/bin/cat >/dev/null; ls / >/dev/null; /usr/bin/env > {evidence}/$EV.env"
    settings(ws, agent, {name: [{"hooks": [{"type": "command", "command":
                                            f"EV={name}; {record}"}]}]
                         for name in ("SessionStart", "PreToolUse")})
    own = evidence / "own.sh"
    start = query(("BASH_ENV", evil), ("LD_PRELOAD", evidence / "evil.so"),
                  ("CLAUDE_ENV_FILE", own))
    tool = query(("PATH", fake), ("CLAUDE_ENV_FILE", own))
    posts = [[f"/v1/events/SessionStart?from=claude&{start}",
              event("SessionStart", ws, source="startup")],
             [f"/v1/events/PreToolUse?from=claude&{tool}",
              event("PreToolUse", ws, tool_name="Bash", tool_input={"command": "ls"})]]
    init = boot(sys.executable, agent_script(POST), json.dumps(posts))
    assert init.wait(timeout=100) == 0, init.stderr
    assert [json.loads(line)[0] for line in init.stdout_lines] == [200, 200], init.stdout
    assert not pwned.exists()
    for name in ("SessionStart", "PreToolUse"):
        env = dict(line.partition("=")[::2] for line in
                   (evidence / f"{name}.env").read_text().splitlines() if "=" in line)
        assert "BASH_ENV" not in env and "LD_PRELOAD" not in env, (name, env)
        assert str(fake) not in env.get("PATH", ""), (name, env)
        expected = str(own) if name == "SessionStart" else None
        assert env.get("CLAUDE_ENV_FILE") == expected, (name, env)


def test_a_permission_guard_initd_cannot_read_denies_by_its_decision(boot, agent: Agent,
                                                                     ws: Path) -> None:
    """A workspace settings file initd cannot parse stands in as an error on every
    guard-capable event (invariant 12). On PermissionRequest, where Claude Code ignores
    exit 2, initd's answer is a decision object that denies; on PreToolUse, a deny."""
    settings(ws, agent, '{"hooks": {"PermissionRequest": [')
    tool = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /data"}}
    runs = [[{}, event("PermissionRequest", ws, **tool)],
            [{}, event("PreToolUse", ws, tool_use_id="toolu_1", **tool)]]
    init = boot(sys.executable, agent_script(EMIT), json.dumps(runs))
    assert init.wait(timeout=100) == 0, init.stderr
    (code, out, err), (code2, out2, err2) = (json.loads(line) for line in init.stdout_lines)
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["decision"][
        "behavior"] == "deny", (code, out, err)
    assert code2 == 0 and json.loads(out2)["hookSpecificOutput"][
        "permissionDecision"] == "deny", (code2, out2, err2)
