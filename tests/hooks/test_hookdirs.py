"""Where the pre-commit chain goes (initd/hooks/hookdirs.py): directly in .git/hooks, the
repository's own hook moved aside to run first under its own name with its siblings
beside it and put back at uninstall; or, when core.hooksPath sends git elsewhere, an
overlay that runs that directory's hooks in place and puts core.hooksPath back exactly.
With the hook managers' real installs: tests/conformance/test_hook_managers.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from initd.errors import InitdError
from initd.hooks import hookdirs
from initd.hooks.gitrepo import Repo
from initd.hooks.gitscripts import MARKER
from tests.hooks.support import git_ok, git_repo

CHAIN = f"#!/bin/sh\n# {MARKER}\nexit 0\n"


def executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def test_direct_the_repositorys_own_hook_runs_first_and_comes_back(tmp_path: Path) -> None:
    ws = git_repo(tmp_path / "ws")
    hooks = ws / ".git" / "hooks"
    executable(hooks / "pre-commit", "#!/bin/sh\necho own\n")
    executable(hooks / "husky.sh", "# helper\n")
    said = hookdirs.install_direct(Repo(str(ws)), CHAIN)
    own = ws / ".git" / "initd" / "own"
    assert (hooks / "pre-commit").read_text() == CHAIN
    assert (own / "pre-commit").read_text() == "#!/bin/sh\necho own\n"
    assert os.readlink(own / "husky.sh") == "../../hooks/husky.sh"  # its sibling, beside it
    assert "moved to" in said[0]
    assert hookdirs.install_direct(Repo(str(ws)), CHAIN) == []  # again: nothing new
    said = hookdirs.uninstall_direct(Repo(str(ws)))
    assert said == ["removed initd's pre-commit chain", f"restored {hooks / 'pre-commit'}"]
    assert (hooks / "pre-commit").read_text() == "#!/bin/sh\necho own\n"
    assert list(own.iterdir()) == []


def test_a_manager_that_moved_the_chain_aside_is_taken_over(tmp_path: Path) -> None:
    ws = git_repo(tmp_path / "ws")
    hooks = ws / ".git" / "hooks"
    hookdirs.install_direct(Repo(str(ws)), CHAIN)
    (hooks / "pre-commit").rename(hooks / "pre-commit.old")  # lefthook's install
    executable(hooks / "pre-commit", "#!/bin/sh\nlefthook run pre-commit\n")
    hookdirs.install_direct(Repo(str(ws)), CHAIN)
    assert (hooks / "pre-commit").read_text() == CHAIN
    assert not (hooks / "pre-commit.old").exists()  # initd's leftover: gone
    assert "lefthook" in (ws / ".git" / "initd" / "own" / "pre-commit").read_text()


def test_a_link_or_a_directory_is_never_taken_for_initds(tmp_path: Path) -> None:
    ws = git_repo(tmp_path / "ws")
    hooks = ws / ".git" / "hooks"
    elsewhere = tmp_path / "chain"
    elsewhere.write_text(CHAIN)
    (hooks / "pre-commit").symlink_to(elsewhere)
    with Repo(str(ws)).at("hooks").open() as opened:
        assert not hookdirs.managed(opened, "pre-commit")  # a link: never
        (hooks / "d").mkdir()
        assert not hookdirs.managed(opened, "d") and not hookdirs.managed(opened, "none")
        (hooks / "real").write_text(CHAIN)
        assert hookdirs.managed(opened, "real")
    hookdirs.install_direct(Repo(str(ws)), CHAIN)
    assert elsewhere.read_text() == CHAIN and (hooks / "pre-commit").is_file()
    assert (ws / ".git" / "initd" / "own" / "pre-commit").is_symlink()  # moved, unfollowed


def test_an_own_hook_that_is_a_relative_link_names_the_same_file_and_comes_back(
        tmp_path: Path) -> None:
    """``ln -s ../../scripts/pre-commit .git/hooks/``: moved as it was, the link named
    .git/scripts/pre-commit from .git/initd/own, and then the cleanup of stale sibling
    links removed it: the repository's own hook never ran, and uninstall had nothing to
    put back."""
    ws = git_repo(tmp_path / "ws")
    executable(ws / "scripts" / "pre-commit", "#!/bin/sh\necho own\n")
    hooks = ws / ".git" / "hooks"
    (hooks / "pre-commit").symlink_to("../../scripts/pre-commit")
    hookdirs.install_direct(Repo(str(ws)), CHAIN)
    own = ws / ".git" / "initd" / "own" / "pre-commit"
    assert own.is_symlink() and own.read_text() == "#!/bin/sh\necho own\n"
    hookdirs.install_direct(Repo(str(ws)), CHAIN)  # again: still there
    assert own.is_symlink() and own.resolve() == (ws / "scripts" / "pre-commit")
    hookdirs.uninstall_direct(Repo(str(ws)))
    assert os.readlink(hooks / "pre-commit") == "../../scripts/pre-commit"  # exactly


def test_an_overlay_runs_the_previous_directory_and_puts_core_hooks_path_back(
        tmp_path: Path) -> None:
    ws = git_repo(tmp_path / "ws")
    git_ok(ws, "config", "core.hooksPath", ".githooks")
    said = hookdirs.install_overlay(Repo(str(ws)), lambda previous: f"{CHAIN}# {previous}\n")
    overlay = ws / ".git" / "initd" / "hooks"
    assert "core.hooksPath was set (this repository's: .githooks)" in said[0]
    assert Repo(str(ws)).hooks_path == str(overlay)
    assert (overlay / "pre-commit").read_text().endswith("# .githooks\n")
    assert "hook=.githooks/commit-msg\n" in (overlay / "commit-msg").read_text()
    hookdirs.install_overlay(Repo(str(ws)), lambda previous: CHAIN)  # again: still .githooks
    assert "hook=.githooks/pre-push\n" in (overlay / "pre-push").read_text()
    hookdirs.uninstall_overlay(Repo(str(ws)))
    assert Repo(str(ws)).hooks_path == ".githooks" and not overlay.exists()


def test_an_overlay_whose_previous_value_is_lost_says_so(tmp_path: Path) -> None:
    ws = git_repo(tmp_path / "ws")
    git_ok(ws, "config", "core.hooksPath", ".githooks")
    hookdirs.install_overlay(Repo(str(ws)), lambda previous: CHAIN)
    (ws / ".git" / "initd" / hookdirs.STATE).write_text('{"hooks": 3}')
    with pytest.raises(InitdError, match="what it named before is lost"):
        hookdirs.install_overlay(Repo(str(ws)), lambda previous: CHAIN)
