"""The pre-commit chain beside the repository's own hooks, attacked by the agent (invariant
8): root installs the chain at boot into a git dir the agent writes, so every name there
(the hooks directory, initd's mirror of the repository's own hook, its overlay of
core.hooksPath and its record of the previous value) may be a link, a forged "initd's"
file, a huge file or one of thousands. Root never writes through a link, never runs a
file of the agent's, and says in one line when it will not install."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.attack import GIT_ENV, Agent, Canary, as_agent

INITD = [sys.executable, "-m", "initd"]


@pytest.fixture
def record() -> Iterator[Path]:
    """A directory anyone may write, where a hook notes who ran it (``id -u``)."""
    path = Path(tempfile.mkdtemp(prefix="initd-atk-ran-"))
    path.chmod(0o1777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def recorder(record: Path, word: str) -> str:
    return f'#!/bin/sh\n# discobot:managed\necho "{word} $(id -u)" >> {record}/ran\n'


def ran(record: Path) -> list[str]:
    try:
        return (record / "ran").read_text().splitlines()
    except FileNotFoundError:
        return []


def chain_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "pre-commit chain" in line]


def commit(agent: Agent, ws: Path) -> subprocess.CompletedProcess[str]:
    return as_agent(agent, f"cd {ws} && echo x >> f && git add f && git commit -qm x",
                    check=False)


def plant(agent: Agent, ws: Path, rel: str, text: str) -> None:
    """A file of the agent's at ``rel`` in its workspace, executable."""
    path = ws / rel
    as_agent(agent, f"mkdir -p {path.parent}")
    path.write_text(text)
    os.chown(path, agent.uid, agent.gid)
    path.chmod(0o755)


def test_root_runs_no_file_of_the_agents_and_trusts_no_forged_marker(
        boot, agent: Agent, ws: Path, record: Path) -> None:
    """A forged "initd's" chain in .git/hooks, a planted own hook and leftover, a
    core.hooksPath hook: at boot root runs none of them (nothing is recorded), replaces
    the forged chain with its own (never trusting the marker to mean its bytes), and the
    agent's commit then runs them as the agent."""
    plant(agent, ws, ".git/hooks/pre-commit", recorder(record, "forged"))
    plant(agent, ws, ".git/hooks/pre-commit.old", recorder(record, "leftover"))
    plant(agent, ws, ".git/initd/own/pre-commit", recorder(record, "own").replace(
        "# discobot:managed\n", ""))
    init = boot("true")
    assert init.wait() == 0, init.stderr
    assert ran(record) == []  # root ran nothing of the agent's
    chain = (ws / ".git" / "hooks" / "pre-commit").read_text()
    assert "forged" not in chain and "discobot:managed" in chain
    assert not (ws / ".git" / "hooks" / "pre-commit.old").exists()  # a leftover: gone
    assert commit(agent, ws).returncode == 0
    assert ran(record) == [f"own {agent.uid}"]


def test_a_hooks_path_hook_runs_as_the_agent_only(boot, agent: Agent, ws: Path,
                                                  record: Path) -> None:
    """core.hooksPath at a root-owned directory the agent may read, holding a hook: root
    installs the overlay without running or writing it; the commit runs it as the agent."""
    shared = Path(tempfile.mkdtemp(prefix="initd-atk-shared-"))
    try:
        shared.chmod(0o755)
        (shared / "pre-commit").write_text(recorder(record, "shared"))
        (shared / "pre-commit").chmod(0o755)
        before = (shared / "pre-commit").read_bytes(), sorted(os.listdir(shared))
        as_agent(agent, f"git -C {ws} config core.hooksPath {shared}")
        init = boot("true")
        assert init.wait() == 0, init.stderr
        assert ran(record) == []
        assert ((shared / "pre-commit").read_bytes(), sorted(os.listdir(shared))) == before
        assert commit(agent, ws).returncode == 0
        assert ran(record) == [f"shared {agent.uid}"]
    finally:
        shutil.rmtree(shared)


LINKS = {  # what the agent makes a link to the canary (its victim file or its directory)
    "hooks/pre-commit": "victim",  # the own hook: moved as a link, never read through
    "hooks/pre-commit.old": "victim",  # a "leftover" that is a link: not initd's
    "hooks/husky.sh": "victim",  # a sibling: linked to by name only
    "initd": "sub",  # initd's directory itself
    "initd/own": "sub",  # the mirror
    "initd/own/husky.sh": "victim",  # a mirror entry, replaced by initd's own link
    "initd/own/pre-commit": "victim",  # the own hook kept there, as a link
}


@pytest.mark.parametrize("rel", sorted(LINKS))
def test_a_link_in_the_git_dir_is_never_followed(boot, agent: Agent, ws: Path,
                                                 canary: Canary, rel: str) -> None:
    """Each name root walks or writes: a link there to a root file or directory is moved,
    replaced or refused, never written, read or listed through."""
    plant(agent, ws, ".git/hooks/commit-msg", "#!/bin/sh\nexit 0\n")
    if rel == "initd/own/pre-commit":  # a new own hook, so that the kept one is judged
        plant(agent, ws, ".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n")
    target = canary.victim if LINKS[rel] == "victim" else canary.sub
    path = ws / ".git" / rel
    as_agent(agent, f"mkdir -p {path.parent} && rm -rf {path} && ln -s {target} {path}")
    init = boot("true")
    assert init.wait() == 0, init.stderr
    assert canary.changes() == []
    assert canary.leaked_into(ws) == []
    lines = [line for line in chain_lines(init.stderr) if "not installed" in line]
    if rel in ("initd", "initd/own"):
        [line] = lines
        assert "symbolic link" in line
    else:
        assert lines == []


def test_a_forged_record_of_the_previous_hooks_path_runs_nothing(
        agent: Agent, ws: Path, record: Path) -> None:
    """The agent forges initd's record of the core.hooksPath it overlays: root passes
    the value to git as one argument and quotes it in the scripts, so a value built to
    be a command is only a (strange) directory name."""
    overlay = ws / ".git" / "initd" / "hooks"
    as_agent(agent, f"git -C {ws} config core.hooksPath {overlay}")
    evil = f"$(touch {record}/pwned)`touch {record}/pwned`"
    plant(agent, ws, ".git/initd/hooksPath.json",
          json.dumps({"local": evil, "hooks": evil}) + "\n")
    for verb in ("install", "uninstall"):
        out = subprocess.run([*INITD, "precommit", verb, "--workspace", str(ws), "--user",
                              agent.name], capture_output=True, text=True, env=GIT_ENV,
                             timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
        if verb == "install":
            assert commit(agent, ws).returncode == 0
    assert not (record / "pwned").exists()
    got = as_agent(agent, f"git -C {ws} config core.hooksPath").stdout.rstrip("\n")
    assert got == evil  # put back as it was recorded, byte for byte


def test_a_hooks_directory_of_many_names_is_refused_in_one_line(
        boot, agent: Agent, ws: Path, record: Path) -> None:
    """Thousands of names in .git/hooks: root reads a bounded number and refuses, with one
    line; the repository's own hook stays where it was and still guards its commits."""
    plant(agent, ws, ".git/hooks/pre-commit", recorder(record, "own").replace(
        "# discobot:managed\n", ""))
    as_agent(agent, f"cd {ws}/.git/hooks && seq 1 5000 | xargs touch")
    init = boot("true")
    assert init.wait() == 0, init.stderr
    [line] = [line for line in chain_lines(init.stderr) if "not installed" in line]
    assert "entries" in line
    assert "discobot:managed" not in (ws / ".git" / "hooks" / "pre-commit").read_text()
    assert ran(record) == []
    assert commit(agent, ws).returncode == 0
    assert ran(record) == [f"own {agent.uid}"]


def test_a_huge_own_hook_is_moved_not_read(boot, agent: Agent, ws: Path) -> None:
    """A 1 GiB own hook (sparse): moved aside by a rename, its bytes never read whole."""
    hook = ws / ".git" / "hooks" / "pre-commit"
    as_agent(agent, f"truncate -s 1G {hook} && chmod 755 {hook}")
    inode = hook.stat().st_ino
    init = boot("true")
    assert init.wait() == 0, init.stderr
    own = ws / ".git" / "initd" / "own" / "pre-commit"
    info = own.stat()
    assert (info.st_ino, info.st_size, info.st_uid) == (inode, 1 << 30, agent.uid)
    assert stat.S_IMODE(info.st_mode) == 0o755
