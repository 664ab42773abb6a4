"""A git repository as the pre-commit chain sees it: where git looks for hooks, which
``core.hooksPath`` sends it there, and the places inside the git dir that initd writes.

Every git call runs as ``account`` when root acts for the agent (the repository's
configuration runs nothing as root, invariant 8), from ``/``, cancellable (git.run).
"""

from __future__ import annotations

import os
import subprocess
import threading

from initd.errors import InitdError
from initd.process import git, users
from initd.process.users import Account
from initd.state import agentfs

HOOK = "pre-commit"
INITD_DIR = "initd"  # in the git (common) dir: initd's own, removed by uninstall
OWN_DIR = "own"  # the repository's own hook, under its own name, beside links to its siblings
OVERLAY_DIR = "hooks"  # what core.hooksPath names while initd overlays it


class Repo:
    """A git repository as initd's own git calls see it: as ``account`` when root acts
    for the agent, so the repository's configuration runs nothing as root; ``cancel``
    (boot's stop signal) stops each of them at once (git.run)."""

    def __init__(self, workspace: str, account: Account | None = None,
                 cancel: threading.Event | None = None) -> None:
        self.workspace = os.path.abspath(workspace)
        self.account = account
        self.cancel = cancel
        self.top = self.git("rev-parse", "--show-toplevel")
        self.git_hooks = os.path.normpath(os.path.join(
            self.workspace, self.git("rev-parse", "--git-path", "hooks")))
        self.common_dir = os.path.normpath(os.path.join(
            self.workspace, self.git("rev-parse", "--git-common-dir")))
        info = os.stat(self.common_dir)
        self.owner = (info.st_uid, info.st_gid)  # who the script and backups belong to
        # core.hooksPath as git reads it (any scope), and the repository's own setting
        self.hooks_path = self.config_get("core.hooksPath")
        self.hooks_path_local = self.config_get("--local", "core.hooksPath")

    @classmethod
    def find(cls, workspace: str, account: Account | None = None,
             cancel: threading.Event | None = None) -> Repo | None:
        """The repository at ``workspace``, or None (not one, or the look cancelled)."""
        if not os.path.lexists(os.path.join(workspace, ".git")):
            return None  # not a repository's top (.git: a directory, or a worktree's file)
        try:
            return cls(workspace, account, cancel)
        except InitdError:
            return None

    def _run(self, *args: str, account: Account | None = None) -> git.Ran:
        try:
            out = git.git(self.workspace, *args, account=account or self.account,
                          timeout=30, cancel=self.cancel)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise InitdError(f"git {' '.join(args)}: {err}") from None
        if out.cancelled:
            raise InitdError(f"git {' '.join(args)}: stopped: initd is stopping")
        return out

    def git(self, *args: str) -> str:
        out = self._run(*args)
        if out.returncode != 0:
            error = out.stderr.decode(errors="replace").strip()
            raise InitdError(f"{self.workspace}: not a git repository "
                             f"({error or 'git ' + args[0] + ' failed'})")
        return os.fsdecode(out.stdout).strip()

    def config_get(self, *args: str) -> str | None:
        """``git config --get``: the value, or None when it is not set (exit 1)."""
        out = self._run("config", "--get", *args)
        if out.returncode == 1:
            return None
        if out.returncode != 0:
            raise InitdError(f"git config --get {' '.join(args)}: "
                             f"{out.stderr.decode(errors='replace').strip()}")
        return os.fsdecode(out.stdout).rstrip("\n")

    def config_set(self, key: str, value: str | None) -> None:
        """The repository's own ``key`` set to ``value`` (None: unset), by git run as the
        repository's owner: the file git rewrites (a lock renamed over it) stays theirs."""
        args = ("config", "--local", key, value) if value is not None else (
            "config", "--local", "--unset", key)
        out = self._run(*args, account=self._writer())
        if out.returncode != 0 and not (value is None and out.returncode == 5):
            raise InitdError(f"git {' '.join(args)}: "
                             f"{out.stderr.decode(errors='replace').strip()}")

    def _writer(self) -> Account | None:
        if self.account is not None or os.geteuid() != 0 or self.owner[0] == 0:
            return self.account
        try:
            return users.lookup(str(self.owner[0]))
        except InitdError:
            return None

    @property
    def default_hooks(self) -> str:
        """Where git looks when no core.hooksPath sends it elsewhere."""
        return os.path.join(self.common_dir, "hooks")

    @property
    def overlay(self) -> str:
        return os.path.join(self.common_dir, INITD_DIR, OVERLAY_DIR)

    @property
    def overlaid(self) -> bool:
        """git looks elsewhere than .git/hooks: initd overlays core.hooksPath."""
        return self.git_hooks != self.default_hooks

    @property
    def hook(self) -> str:
        """The pre-commit hook git runs now."""
        return os.path.join(self.git_hooks, HOOK)

    def at(self, *parts: str) -> agentfs.Place:
        """A directory inside the git (common) dir, as agentfs walks to it: from the
        workspace, ``.git`` included (no link followed), or, for a linked worktree's git
        dir elsewhere, from that dir, which must then be the agent's."""
        if self.common_dir == os.path.join(self.workspace, ".git"):
            return agentfs.Place(self.workspace, (".git", *parts), owner=self.owner)
        agent = self.account.uid if self.account is not None else None
        return agentfs.Place(self.common_dir, parts, owner=self.owner, base_uid=agent)

    def work_tree(self) -> agentfs.Place:
        return agentfs.Place(self.workspace, (), owner=self.owner)
