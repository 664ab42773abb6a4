"""Which files changed: git plumbing with NUL separators, and the ``.last-eval`` marker.

*Dirty* files are every uncommitted change: tracked files that differ from HEAD (deleted
and both sides of a rename included) plus untracked files git does not ignore; without a
HEAD yet, everything in the index plus the untracked. NUL-separated output (``-z``), so
names with spaces, quotes, newlines or ``$(…)`` arrive intact and are never parsed by a
shell. *Changed* files are the dirty ones modified since the marker.
"""

from __future__ import annotations

import os

from initd.errors import InitdError
from initd.process.git import git


class NotARepository(InitdError):
    """File hooks need git to know what changed; the workspace is not a repository."""


def _paths(out: bytes) -> list[str]:
    return [os.fsdecode(p) for p in out.split(b"\0") if p]


def dirty_files(workspace: str) -> list[str]:
    """Workspace-relative paths of every uncommitted change, sorted. Run by the hook
    service, as the agent: root never asks (no hook of root's runs on changed files)."""
    has_head = git(workspace, "rev-parse", "--verify", "-q", "HEAD").returncode == 0
    # --relative: paths from the workspace, and only inside it, like ls-files below
    tracked = (git(workspace, "diff", "--name-only", "--no-renames", "--no-ext-diff",
                   "--relative", "-z", "HEAD", "--")
               if has_head else git(workspace, "ls-files", "-z", "--cached"))
    untracked = git(workspace, "ls-files", "-z", "--others", "--exclude-standard")
    for out in (tracked, untracked):
        if out.returncode != 0:
            error = out.stderr.decode(errors="replace").strip()
            if "not a git repository" in error:
                raise NotARepository(f"file hooks need the workspace to be a git repository "
                                     f"(they run on what changed): {workspace} is not one; "
                                     "run git init there")
            raise OSError(f"git in {workspace}: {error}")
    return sorted(set(_paths(tracked.stdout)) | set(_paths(untracked.stdout)))


def changed_since(workspace: str, marker_ns: int, dirty: list[str]) -> list[str]:
    """The dirty files modified at or after the marker. A deleted file counts when its
    directory changed since (deleting a file touches its directory)."""
    changed = []
    for path in dirty:
        full = os.path.join(workspace, path)
        try:
            when = os.lstat(full).st_mtime_ns
        except (FileNotFoundError, NotADirectoryError):  # deleted (or its dir is a file now)
            try:
                when = os.stat(os.path.dirname(full) or workspace).st_mtime_ns
            except (FileNotFoundError, NotADirectoryError):
                when = marker_ns  # its whole directory went: a change
        if when >= marker_ns:  # >=: the file system clock is coarse; twice beats never
            changed.append(path)
    return changed
