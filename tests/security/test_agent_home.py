"""The agent's home is the agent's: links, hard links and FIFOs it plants in
``~/.discobot`` never make root write, chown or read anything else (invariant 8).

Root writes there at boot (session hooks' status and logs, recovery), for root hooks the
service asks for, and when the agent kills its own hook service. Each test plants as the
agent, lets root do its work, then checks root-owned canaries.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.attack import Agent, Canary, as_agent, hook

USER_HOOK = 'echo "user hook ran as $(id -u)"'
ROOT_HOOK = 'echo "root hook ran as $(id -u)"'


def session_hooks(ws: Path, agent: Agent) -> None:
    hooks = ws / ".discobot" / "hooks"
    hook(hooks, "10-user.sh", USER_HOOK, owner=agent, type="session")
    hook(hooks, "20-root.sh", ROOT_HOOK, owner=agent, type="session", run_as="root")


def state(agent: Agent, sid: str) -> Path:
    return agent.state / sid / "hooks"


@pytest.mark.parametrize("planted", ["output", ".status.json.lock", "status.json",
                                     "status.json.corrupt", "output/20-root.log"])
def test_a_link_planted_in_the_state_dir_before_boot_gives_the_agent_nothing(
        boot, agent: Agent, ws: Path, sid: str, canary: Canary, planted: str) -> None:
    """A home on a volume keeps what the agent planted last time: boot must not follow it.
    (``status.json.corrupt``: where root moves a status.json that is not JSON, which the
    agent provides too.)"""
    session_hooks(ws, agent)
    target = canary.sub if planted == "output" else canary.secret
    as_agent(agent, f"mkdir -p {state(agent, sid)}/output && "
                    f"rm -rf {state(agent, sid)}/{planted} && ln -s {target} "
                    f"{state(agent, sid)}/{planted}")
    if planted == "status.json.corrupt":
        as_agent(agent, f"echo 'not json' > {state(agent, sid)}/status.json")
    init = boot("true")
    assert init.wait() == 0, init.stderr
    assert canary.changes() == []
    assert canary.leaked_into(agent.home) == []


@pytest.mark.parametrize("planted", ["{sid}/hooks/.initd-probe", "sessions", "{sid}/events"])
def test_links_where_root_prepares_the_state_give_the_agent_nothing(
        boot, agent: Agent, ws: Path, sid: str, canary: Canary, planted: str) -> None:
    """At boot root makes the session's directories for the agent and proves it can write
    there with a probe file: a link planted at any of them is neither followed nor
    written through (at worst the state is kept in memory), and the agent runs."""
    session_hooks(ws, agent)
    path = agent.state / planted.format(sid=sid)
    target = canary.secret if planted.endswith("probe") else canary.sub
    as_agent(agent, f"mkdir -p {path.parent} && ln -s {target} {path}")
    init = boot("echo", "agent ran")
    assert init.wait() == 0, init.stderr
    assert init.stdout_lines == ["agent ran"]
    assert canary.changes() == []
    assert canary.leaked_into(agent.home) == []


def test_a_linked_discobot_directory_is_refused_and_the_agent_still_runs(
        boot, agent: Agent, ws: Path, canary: Canary) -> None:
    session_hooks(ws, agent)
    as_agent(agent, f"mv {agent.state} {agent.state}.kept 2>/dev/null; "
                    f"ln -s {canary.dir} {agent.state}")
    try:
        init = boot("echo", "agent ran")
        assert init.wait() == 0, init.stderr
        assert init.stdout_lines == ["agent ran"]
        assert canary.changes() == []
        assert "symbolic link" in init.stderr
    finally:
        os.unlink(agent.state)
        as_agent(agent, f"mv {agent.state}.kept {agent.state} 2>/dev/null || true")


@pytest.mark.parametrize("planted", [".status.json.lock", "status.json"])
def test_hard_links_to_root_files_are_neither_given_away_nor_read(
        boot, agent: Agent, ws: Path, sid: str, planted: str) -> None:
    """With fs.protected_hardlinks=0 (a host setting, not one a PID namespace has) the
    agent may hard-link any root file into its home; root makes the link here on its
    behalf, as the agent could on such a host."""
    canary = Canary(base=os.path.dirname(agent.home))  # a hard link needs one file system
    try:
        session_hooks(ws, agent)
        as_agent(agent, f"mkdir -p {state(agent, sid)}")
        os.link(canary.secret, state(agent, sid) / planted)
        init = boot("true")
        assert init.wait() == 0, init.stderr
        assert canary.changes() == []
        assert canary.leaked_into(agent.home) == []
    finally:
        canary.remove()


def test_a_fifo_for_the_lock_or_the_status_never_hangs_boot(
        boot, agent: Agent, ws: Path, sid: str) -> None:
    session_hooks(ws, agent)
    as_agent(agent, f"mkdir -p {state(agent, sid)} && mkfifo {state(agent, sid)}/status.json "
                    f"{state(agent, sid)}/.status.json.lock")
    init = boot("echo", "agent ran")
    assert init.wait(timeout=30) == 0, init.stderr
    assert init.stdout_lines == ["agent ran"]
