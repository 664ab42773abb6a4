"""agentfs itself, as root against the agent's moves (found by attacking it): a base the
agent names is never made, followed or chowned; an append never writes or gives away
a hard link to another's file; a link it makes is the agent's, never chowned by name."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.state import agentfs
from tests.support.attack import Agent, Canary, as_agent


@pytest.fixture
def home(agent: Agent) -> Iterator[Path]:
    """A directory of the agent's, in a root-owned parent (like a home in /home)."""
    parent = Path(tempfile.mkdtemp(prefix="initd-atk-fs-"))
    os.chmod(parent, 0o755)
    path = parent / "agent"
    path.mkdir()
    os.chown(path, agent.uid, agent.gid)
    yield path
    shutil.rmtree(parent, ignore_errors=True)


def test_a_base_the_agent_names_is_never_followed(agent: Agent, home: Path,
                                                  canary: Canary) -> None:
    """A worktree's git dir is a path the agent chooses: a link there to a root directory
    is refused before anything is made or chowned in it (it once was chowned)."""
    as_agent(agent, f"ln -s {canary.sub} {home}/gitdir")
    place = agentfs.Place(str(home / "gitdir"), ("hooks",), owner=(agent.uid, agent.gid),
                          base_uid=agent.uid)
    with pytest.raises(agentfs.Unsafe, match="symbolic link"):
        place.open(create=True)
    assert canary.changes() == []


def test_a_base_the_agent_names_is_never_made(agent: Agent, home: Path) -> None:
    """Were root to make it, the agent could swap a link in between the make and the
    open: a missing one is simply missing."""
    place = agentfs.Place(str(home / "missing"), ("hooks",), owner=(agent.uid, agent.gid),
                          base_uid=agent.uid)
    with pytest.raises(FileNotFoundError):
        place.open(create=True)
    assert not (home / "missing").exists()


def test_a_root_directory_reached_another_way_is_refused(agent: Agent, home: Path,
                                                         canary: Canary) -> None:
    """A link higher up the path is followed (a /home that is a link is fine), but then
    the base must be the agent's."""
    as_agent(agent, f"ln -s {canary.dir} {home}/up")
    place = agentfs.Place(str(home / "up" / "sub"), owner=(agent.uid, agent.gid),
                          base_uid=agent.uid)
    with pytest.raises(agentfs.Unsafe, match="belongs to uid 0"):
        place.open(create=True)
    assert canary.changes() == []


def test_an_append_never_writes_or_gives_away_another_users_file(agent: Agent, home: Path
                                                                 ) -> None:
    canary = Canary(base=str(home.parent), files={"empty": ""})
    try:
        os.link(canary.dir / "empty", home / "log")  # as protected_hardlinks=0 would allow
        with agentfs.Place(str(home), owner=(agent.uid, agent.gid)).open() as where:
            with pytest.raises(agentfs.Unsafe):
                where.append("log", b"line\n")
            where.append("new.log", b"line\n")  # one root makes: the agent's
        assert canary.changes() == []
        info = (home / "new.log").stat()
        assert (info.st_uid, (home / "new.log").read_bytes()) == (agent.uid, b"line\n")
    finally:
        canary.remove()


def test_a_link_made_for_the_agent_is_its_own_and_never_chowned_by_name(
        agent: Agent, home: Path) -> None:
    """Given to the agent inside root's own 0700 staging directory (where nothing of the
    agent's can be swapped in), then renamed into place; the staging directory is gone."""
    with agentfs.Place(str(home), owner=(agent.uid, agent.gid)).open() as where:
        where.symlink("target", "current")
        where.symlink("other", "current")  # again, over the first
    assert os.readlink(home / "current") == "other"
    info = os.lstat(home / "current")
    assert (info.st_uid, info.st_gid) == (agent.uid, agent.gid)
    assert [n for n in os.listdir(home) if n != "current"] == []


# --- a directory an operator names (--state-dir) that may lie in the agent's tree


def test_a_named_directory_in_root_only_trees_is_one_trusted_base(home: Path) -> None:
    root_dir = home.parent / "root-state"  # in a root 0755 directory, under /tmp (sticky)
    root_dir.mkdir()
    place = agentfs.Place.named(str(root_dir))
    assert (place.base, place.parts) == (str(root_dir), ())


def test_a_named_directory_in_the_agents_tree_is_walked_from_where_root_stops(
        agent: Agent, home: Path, canary: Canary) -> None:
    """The agent's link where the operator named its state: the walk refuses it, and
    root's files stay as they were."""
    named = home / "state"
    as_agent(agent, f"ln -s {canary.sub} {named}")
    place = agentfs.Place.named(str(named), owner=(agent.uid, agent.gid))
    assert (place.base, place.parts) == (str(home.parent), ("agent", "state"))
    with pytest.raises(agentfs.Unsafe):
        place.open(create=True)
    as_agent(agent, f"rm {named} && mkdir -p {named}/deeper")
    with agentfs.Place.named(str(named / "deeper"), owner=(agent.uid, agent.gid)).open() as d:
        d.write("x", b"y")
    assert (named / "deeper" / "x").stat().st_uid == agent.uid
    assert canary.changes() == []


def test_a_link_root_made_in_a_root_only_directory_is_followed(home: Path) -> None:
    target = home.parent / "real"
    target.mkdir()
    (home.parent / "alias").symlink_to(target)
    place = agentfs.Place.named(str(home.parent / "alias" / "sub"))
    assert (place.base, place.parts) == (str(target), ("sub",))


def test_a_link_the_agent_planted_in_a_sticky_directory_is_never_followed(
        agent: Agent, home: Path, canary: Canary) -> None:
    """/tmp is root's and sticky: only root's own entries there are root's to trust. A
    link the agent made where an operator named the state (--state-dir /tmp/initd, made
    at a first boot and given to the agent, then swapped) is where the walk stops."""
    sticky = home.parent / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)
    as_agent(agent, f"ln -s {canary.sub} {sticky}/initd")
    place = agentfs.Place.named(str(sticky / "initd" / "state"), owner=(agent.uid, agent.gid))
    assert (place.base, place.parts) == (str(sticky), ("initd", "state"))
    with pytest.raises(agentfs.Unsafe):
        place.open(create=True)
    assert canary.changes() == []
