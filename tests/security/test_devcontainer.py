"""devcontainer.json is the agent's to write (invariant 8): it never makes initd run
anything as root or as another user for an agent that is not root, root reads it without
following a link, and what the agent writes after boot never reaches what runs."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.attack import Agent, Canary, as_agent
from tests.support.harness import Initd


@pytest.fixture(autouse=True)
def forget_markers(agent: Agent) -> Iterator[None]:
    yield
    shutil.rmtree(agent.state / "devcontainer", ignore_errors=True)


def plant(agent: Agent, ws: Path, data: object, name: str = ".devcontainer.json") -> Path:
    """The file, written by the agent."""
    path = ws / name
    as_agent(agent, f"cat > {path} <<'EOF'\n{json.dumps(data)}\nEOF")
    return path


def said(init: Initd) -> list[dict[str, object]]:
    return [json.loads(line) for line in init.stderr.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("key", ["remoteUser", "containerUser"])
def test_naming_root_runs_the_commands_as_the_agent_and_says_so(
        boot: Callable[..., Initd], agent: Agent, ws: Path, canary: Canary, key: str) -> None:
    attack = (f"id -u >> {ws}/uids; touch {canary.dir}/pwned; "
              f"echo owned >> {canary.victim}; chmod 777 {canary.secret}; exit 0")
    path = plant(agent, ws, {key: "root", "onCreateCommand": attack,
                             "postCreateCommand": {"a": attack, "b": ["sh", "-c", attack]},
                             "postStartCommand": attack})
    init = boot("sh", "-c", f"i=0; while [ $(wc -l < {ws}/uids) -lt 4 ] && [ $i -lt 400 ]; "
                            "do i=$((i+1)); sleep 0.05; done")
    assert init.wait(timeout=60) == 0, init.stderr
    assert (ws / "uids").read_text().split() == [str(agent.uid)] * 4
    assert canary.changes() == []
    assert not (canary.dir / "pwned").exists()
    warnings = [e["event"] for e in said(init) if e.get("level") == "warning"]
    assert f"devcontainer: {path}: {key} 'root': the commands run as the agent user " \
        f"'{agent.name}' instead: the agent can write this file, and initd never runs " \
        "what it says as anyone but the agent" in warnings


def test_what_the_agent_writes_after_boot_never_runs(
        boot: Callable[..., Initd], agent: Agent, ws: Path, canary: Canary) -> None:
    """The background stages run what the file said at boot: the agent rewriting it (to
    name root and another command) changes nothing."""
    plant(agent, ws, {"postCreateCommand": f"until [ -e {ws}/go ]; do sleep 0.05; done; "
                                           f"id -u > {ws}/ran-as"})
    evil = json.dumps({"remoteUser": "root", "postCreateCommand": f"touch {canary.dir}/p"})
    init = boot("sh", "-c", f"printf '%s' '{evil}' > {ws}/.devcontainer.json && touch "
                            f"{ws}/go && i=0; while [ ! -s {ws}/ran-as ] && [ $i -lt 400 ]; "
                            "do i=$((i+1)); sleep 0.05; done")
    assert init.wait(timeout=60) == 0, init.stderr
    assert (ws / "ran-as").read_text().strip() == str(agent.uid)
    assert canary.changes() == []


def test_root_reads_no_link_and_shows_nothing_of_what_it_points_to(
        boot: Callable[..., Initd], agent: Agent, ws: Path, canary: Canary) -> None:
    as_agent(agent, f"ln -s {canary.secret} {ws}/.devcontainer.json")
    init = boot("true")
    assert init.wait(timeout=60) == 0, init.stderr
    assert canary.token not in init.stderr + "\n".join(init.stdout_lines)
    assert any("a symbolic link: not read" in str(e["event"]) for e in said(init))
    assert canary.changes() == []


def test_a_planted_marker_link_is_not_written_through(
        boot: Callable[..., Initd], agent: Agent, ws: Path, canary: Canary) -> None:
    """Root records a stage done in the agent's state: a link planted there is replaced,
    never followed to a root file."""
    as_agent(agent, f"mkdir -p {agent.state}/devcontainer && "
                    f"ln -s {canary.victim} {agent.state}/devcontainer/lifecycle.json")
    plant(agent, ws, {"onCreateCommand": "true"})
    init = boot("true")
    assert init.wait(timeout=60) == 0, init.stderr
    assert canary.changes() == []
    markers = agent.state / "devcontainer" / "lifecycle.json"
    assert not markers.is_symlink() and os.stat(markers).st_uid == agent.uid
    assert "onCreateCommand" in json.loads(markers.read_text())["configs"][
        str(ws / ".devcontainer.json")]["done"]
