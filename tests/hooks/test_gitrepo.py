"""A git repository as the pre-commit chain sees it (initd/hooks/gitrepo.py): where git
looks for hooks, the core.hooksPath that sends it elsewhere, the repository's own
setting changed, and the directories inside the git dir walked to without a link."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from initd.errors import InitdError
from initd.hooks.gitrepo import Repo
from tests.hooks.support import GIT_ENV, git, git_ok, git_repo


def test_not_a_repository_is_none(tmp_path: Path) -> None:
    assert Repo.find(str(tmp_path)) is None
    (tmp_path / ".git").write_text("gitdir: /nonexistent\n")  # a worktree's file, broken
    assert Repo.find(str(tmp_path)) is None
    with pytest.raises(InitdError, match="not a git repository"):
        Repo(str(tmp_path / "none"))


def test_where_git_looks_for_hooks(tmp_path: Path) -> None:
    repo = Repo.find(str(git_repo(tmp_path / "ws")))
    assert repo is not None and not repo.overlaid
    ws = tmp_path / "ws"
    assert (repo.top, repo.common_dir) == (str(ws), str(ws / ".git"))
    assert repo.git_hooks == repo.default_hooks == str(ws / ".git" / "hooks")
    assert repo.hook == str(ws / ".git" / "hooks" / "pre-commit")
    assert repo.hooks_path is None and repo.owner == (os.geteuid(), os.getegid())
    assert repo.at("initd", "own").path == str(ws / ".git" / "initd" / "own")
    assert repo.overlay == str(ws / ".git" / "initd" / "hooks")


def test_core_hooks_path_sends_git_elsewhere(tmp_path: Path) -> None:
    ws = git_repo(tmp_path / "ws")
    git_ok(ws, "config", "core.hooksPath", ".husky/_")
    repo = Repo(str(ws))
    assert repo.overlaid and repo.hooks_path == repo.hooks_path_local == ".husky/_"
    assert repo.git_hooks == str(ws / ".husky" / "_")


def test_config_get_and_set(tmp_path: Path) -> None:
    repo = Repo(str(git_repo(tmp_path / "ws")))
    assert repo.config_get("initd.test") is None
    repo.config_set("initd.test", "a value; $(x)")
    assert repo.config_get("initd.test") == "a value; $(x)"
    repo.config_set("initd.test", None)
    repo.config_set("initd.test", None)  # unset twice: fine
    assert repo.config_get("initd.test") is None
    with pytest.raises(InitdError):
        repo.config_set("not a key", "x")


def test_a_linked_worktrees_git_dir_must_be_its_owners(tmp_path: Path) -> None:
    main = git_repo(tmp_path / "main")
    git_ok(main, "commit", "-q", "--allow-empty", "-m", "x")
    git_ok(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    repo = Repo(str(tmp_path / "wt"))
    assert repo.common_dir == str(main / ".git")
    place = repo.at("initd")
    assert place.base == str(main / ".git") and place.base_uid is None  # no account
    assert git(tmp_path / "wt", "status").returncode == 0
    assert subprocess.run(["git", "-C", str(tmp_path / "wt"), "rev-parse", "--git-dir"],
                          capture_output=True, env=GIT_ENV).returncode == 0
