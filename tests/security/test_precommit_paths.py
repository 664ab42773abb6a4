"""The managed pre-commit chain is written with the repository owner's credentials, only
inside the repository's real git dir: a hooks path outside it or through a link is
refused with one clear line, and never written through (invariant 8)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.attack import GIT_ENV, Agent, Canary, as_agent

INITD = [sys.executable, "-m", "initd"]


def chain_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "pre-commit chain" in line]


def test_a_linked_hooks_directory_is_refused(boot, agent: Agent, ws: Path,
                                             canary: Canary) -> None:
    as_agent(agent, f"rm -rf {ws}/.git/hooks && ln -s {canary.sub} {ws}/.git/hooks")
    init = boot("echo", "agent ran")
    assert init.wait() == 0, init.stderr
    assert init.stdout_lines == ["agent ran"]
    assert canary.changes() == []
    [line] = [line for line in chain_lines(init.stderr) if "not installed" in line]
    assert "symbolic link" in line


@pytest.mark.parametrize("where", ["canary", "image"])
def test_a_hooks_path_at_a_root_directory_is_overlaid_never_written(
        boot, agent: Agent, ws: Path, canary: Canary, image: str, where: str) -> None:
    """core.hooksPath at a root directory (the image's own hooks, or anything of root's):
    root writes nothing there; the repository's core.hooksPath names initd's overlay in
    its git dir, whose scripts the agent's commits run, as the agent."""
    target = canary.sub if where == "canary" else Path(image)
    before = sorted(os.listdir(image))
    as_agent(agent, f"git -C {ws} config core.hooksPath {target}")
    init = boot("echo", "agent ran")
    assert init.wait() == 0, init.stderr
    assert canary.changes() == []
    assert sorted(os.listdir(image)) == before
    assert not [line for line in chain_lines(init.stderr) if "not installed" in line]
    overlay = ws / ".git" / "initd" / "hooks"
    assert as_agent(agent, f"git -C {ws} config core.hooksPath").stdout.strip() == str(overlay)
    assert (overlay / "pre-commit").stat().st_uid == agent.uid


def test_a_predictable_temporary_name_is_no_way_in(boot, agent: Agent, ws: Path,
                                                   canary: Canary) -> None:
    """The supervisor is pid 2 of its namespace: its temp name used to be guessable."""
    for pid in range(2, 40):
        as_agent(agent, f"ln -s {canary.victim} {ws}/.git/hooks/pre-commit.initd-{pid}")
    init = boot("true")
    assert init.wait() == 0, init.stderr
    assert canary.changes() == []
    assert "discobot:managed" in (ws / ".git" / "hooks" / "pre-commit").read_text()


def test_a_linked_gitconfig_is_not_written_through(boot, agent: Agent, ws: Path) -> None:
    """A repository root owns makes boot add it to the agent's safe.directory: in the
    agent's own ~/.gitconfig, which the agent has made a link to a root file (one git
    can parse, as root's own ~/.gitconfig would be)."""
    canary = Canary(files={"gitconfig": "[user]\n\tname = root\n"})
    subprocess.run(["chown", "-R", "root:root", str(ws / ".git")], check=True)
    as_agent(agent, f"rm -f ~/.gitconfig && ln -s {canary.dir}/gitconfig ~/.gitconfig")
    try:
        init = boot("true")
        assert init.wait() == 0, init.stderr
        assert canary.changes() == []
    finally:
        os.unlink(os.path.join(agent.home, ".gitconfig"))
        canary.remove()


def test_initd_precommit_install_says_why_it_refuses(agent: Agent, ws: Path,
                                                     canary: Canary) -> None:
    as_agent(agent, f"rm -rf {ws}/.git/hooks && ln -s {canary.sub} {ws}/.git/hooks")
    out = subprocess.run([*INITD, "precommit", "install", "--workspace", str(ws), "--user",
                          agent.name], capture_output=True, text=True, env=GIT_ENV,
                         timeout=60)
    assert out.returncode == 125, out.stdout + out.stderr
    assert out.stderr.startswith("initd: refusing to install the pre-commit chain")
    assert "symbolic link" in out.stderr and len(out.stderr.splitlines()) == 1
    assert canary.changes() == []
