"""supervisor/roothooks.py: root's copies of ``run_as: root`` session hooks, taken right
after discovery into a directory only root can read; root runs those copies alone. On
real files: what is copied and what is not, a copy that stays as it was whatever the
workspace's file becomes, and each reason a hook is not copied (too big, changed between
discovery and the copy, gone, swapped for a link)."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.hooks import discovery
from initd.hooks.context import Snapshot
from initd.hooks.model import Hook
from initd.supervisor.roothooks import SNAPSHOT_LIMIT, RootHooks
from tests.hooks.support import add_hook


@pytest.fixture
def hooks_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace's hooks directory; root's copies go under the test's own tmp_path."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path / "ws" / ".discobot" / "hooks"


@pytest.fixture
def taken() -> Iterator[list[RootHooks]]:
    made: list[RootHooks] = []
    yield made
    for copies in made:
        copies.close()


def discover(hooks_dir: Path) -> dict[str, Hook]:
    found = discovery.discover([str(hooks_dir)], str(hooks_dir.parent.parent))
    assert found.problems == ()
    return {hook.id: hook for hook in found.hooks}


def take(taken: list[RootHooks], hooks: dict[str, Hook]) -> RootHooks:
    copies = RootHooks(list(hooks.values()))
    taken.append(copies)
    return copies


def test_root_session_hooks_alone_are_copied_into_roots_own_directory(
        hooks_dir: Path, tmp_path: Path, taken: list[RootHooks]) -> None:
    root = add_hook(hooks_dir, "10-root.sh", "echo root", type="session", run_as="root")
    add_hook(hooks_dir, "20-user.sh", "echo user", type="session")
    add_hook(hooks_dir, "30-commit.sh", "echo commit", type="pre-commit", run_as="root")
    hooks = discover(hooks_dir)
    copies = take(taken, hooks)
    directory = Path(copies.directory)
    assert directory.parent == tmp_path
    info = directory.stat()
    assert (stat.S_IMODE(info.st_mode), info.st_uid) == (0o700, os.geteuid())
    assert os.listdir(directory) == ["10-root.sh"]
    copy = copies.copy_of(hooks["10-root"])
    assert isinstance(copy, Snapshot)
    assert copy.original == str(root) and copy.content == root.read_bytes()
    assert copy.hook == hooks["10-root"]._replace(path=str(directory / "10-root.sh"))
    assert (directory / "10-root.sh").read_bytes() == root.read_bytes()
    assert stat.S_IMODE((directory / "10-root.sh").stat().st_mode) == 0o700
    for hook_id in ("20-user", "30-commit"):
        assert copies.copy_of(hooks[hook_id]) == (
            f"run_as: root hook {hooks[hook_id].path} was not there when initd started, so "
            "root will not run it (root hooks are fixed at boot, before any hook runs)")


def test_the_copy_stays_as_it_was_whatever_the_file_becomes(
        hooks_dir: Path, taken: list[RootHooks]) -> None:
    root = add_hook(hooks_dir, "10-root.sh", "echo original", type="session", run_as="root")
    hooks = discover(hooks_dir)
    copies = take(taken, hooks)
    before = root.read_bytes()
    root.write_text(before.decode().replace("original", "evil"))
    copy = copies.copy_of(hooks["10-root"])
    assert isinstance(copy, Snapshot) and copy.content == before
    assert Path(copy.hook.path).read_bytes() == before
    assert copies.copy_of(copy.hook) == copy  # (asked by the copy's own path: the same)


def test_a_hook_of_the_same_id_elsewhere_is_not_the_copy(hooks_dir: Path,
                                                         taken: list[RootHooks]) -> None:
    add_hook(hooks_dir, "10-root.sh", "echo root", type="session", run_as="root")
    hooks = discover(hooks_dir)
    copies = take(taken, hooks)
    elsewhere = hooks["10-root"]._replace(path="/elsewhere/10-root.sh")
    said = copies.copy_of(elsewhere)
    assert isinstance(said, str) and "was not there when initd started" in said


def test_a_hook_grown_past_the_limit_is_not_copied(hooks_dir: Path,
                                                  taken: list[RootHooks]) -> None:
    """(Discovery refuses a root hook over the limit: this one grew after it.)"""
    root = add_hook(hooks_dir, "10-root.sh", "echo root", type="session", run_as="root")
    hooks = discover(hooks_dir)
    with root.open("a") as f:
        f.write("#" * SNAPSHOT_LIMIT)
    copies = take(taken, hooks)
    assert copies.copy_of(hooks["10-root"]) == (
        f"run_as: root hook {root} is over {SNAPSHOT_LIMIT} bytes, so root will not run it")
    assert os.listdir(copies.directory) == []


def test_a_hook_changed_between_discovery_and_the_copy_is_not_copied(
        hooks_dir: Path, taken: list[RootHooks]) -> None:
    """A process the agent left (initd as a subreaper) may rewrite it in between: the
    copy must say what discovery read."""
    root = add_hook(hooks_dir, "10-root.sh", "echo root", type="session", run_as="root")
    hooks = discover(hooks_dir)
    add_hook(hooks_dir, "10-root.sh", "echo root", type="session", run_as="root",
             timeout=1)
    copies = take(taken, hooks)
    assert copies.copy_of(hooks["10-root"]) == (
        f"run_as: root hook {root} changed while initd read it at boot, so root will not "
        "run it")
    assert os.listdir(copies.directory) == []


def test_a_hook_swapped_for_a_link_to_another_hook_is_not_copied(
        hooks_dir: Path, tmp_path: Path, taken: list[RootHooks]) -> None:
    """(At boot the copy is read as boot reads files, following a link: what it names
    must still say what discovery read.)"""
    root = add_hook(hooks_dir, "10-root.sh", "echo root", type="session", run_as="root")
    hooks = discover(hooks_dir)
    other = add_hook(tmp_path / "elsewhere", "other.sh", "echo other", type="session",
                     run_as="root", timeout=1)
    root.unlink()
    root.symlink_to(other)
    copies = take(taken, hooks)
    assert copies.copy_of(hooks["10-root"]) == (
        f"run_as: root hook {root} changed while initd read it at boot, so root will not "
        "run it")
    assert os.listdir(copies.directory) == []


def test_a_hook_gone_before_the_copy_is_not_copied(hooks_dir: Path,
                                                   taken: list[RootHooks]) -> None:
    root = add_hook(hooks_dir, "10-root.sh", "echo root", type="session", run_as="root")
    hooks = discover(hooks_dir)
    root.unlink()
    copies = take(taken, hooks)
    assert copies.copy_of(hooks["10-root"]) == (
        f"run_as: root hook {root} could not be read at boot (No such file or directory), "
        "so root will not run it")


def test_close_removes_roots_copies(hooks_dir: Path) -> None:
    add_hook(hooks_dir, "10-root.sh", "echo root", type="session", run_as="root")
    copies = RootHooks(list(discover(hooks_dir).values()))
    assert os.listdir(copies.directory) == ["10-root.sh"]
    copies.close()
    assert not os.path.exists(copies.directory)
    copies.close()  # (again: nothing)
