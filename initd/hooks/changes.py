"""Which files changed: git plumbing with NUL separators, and the ``.last-eval`` marker.

*Dirty* files are every uncommitted change: tracked files that differ from HEAD (deleted
and both sides of a rename included) plus untracked files git does not ignore; without a
HEAD yet, everything in the index plus the untracked. NUL-separated output (``-z``), so
names with spaces, quotes, newlines or ``$(…)`` arrive intact and are never parsed by a
shell. *Changed* files are the dirty ones modified since the marker.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence

from initd.errors import InitdError
from initd.users import Account


def git_env(account: Account | None = None) -> dict[str, str]:
    """initd's own git calls see none of a calling git's GIT_DIR/GIT_INDEX_FILE (a hook
    or a commit may be what called us); as ``account``, with its HOME and USER."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    if account is not None:
        env.update(account.env())
    return env


OUTPUT_LIMIT = 64 * 2**20  # of git's stdout: a workspace's changed names, with room


def run_git(args: Sequence[str], account: Account | None = None, timeout: float = 120,
            check: bool = False, limit: int = OUTPUT_LIMIT,
            ) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` as ``account`` when root acts for it: whatever the agent's repository
    or ~/.gitconfig configures (core.fsmonitor, filters, hooks, includes) then runs as
    the agent, never as root (invariant 8). None: as this process's own user. At most
    ``limit`` bytes of output are held (a million untracked files with long names must
    not cost root gigabytes): past that, git is stopped and OSError says so."""
    drop = account is not None and account.uid != os.geteuid()
    argv = ["git", *args]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=git_env(account), stdin=subprocess.DEVNULL, cwd="/",
                          user=account.uid if drop and account else None,
                          group=account.gid if drop and account else None,
                          extra_groups=list(account.groups) if drop and account else None,
                          ) as child:
        try:
            out, err = _read_capped(child, limit, timeout, " ".join(args[-3:]))
        except BaseException:
            child.kill()
            raise
        code = child.wait()
    done = subprocess.CompletedProcess(argv, code, out, err)
    if check:
        done.check_returncode()
    return done


def _read_capped(child: subprocess.Popen[bytes], limit: int, timeout: float,
                 what: str) -> tuple[bytes, bytes]:
    import selectors
    import time

    assert child.stdout is not None and child.stderr is not None
    deadline = time.monotonic() + timeout
    got: dict[int, list[bytes]] = {child.stdout.fileno(): [], child.stderr.fileno(): []}
    size = 0
    with selectors.DefaultSelector() as selector:
        for pipe in (child.stdout, child.stderr):
            selector.register(pipe.fileno(), selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(child.args, timeout)
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                got[key.fd].append(chunk)
                size += len(chunk)
                if size > limit:
                    raise OSError(f"git …{what}: over {limit} bytes of output: stopped")
    return b"".join(got[child.stdout.fileno()]), b"".join(got[child.stderr.fileno()])


def git(workspace: str, *args: str, account: Account | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """git in ``workspace`` (as ``account``, see run_git), trusting that one path (the
    agent's workspace may belong to root, or git run as the agent may read root's):
    initd's only way of calling git there."""
    return run_git(["-c", f"safe.directory={workspace}", "-C", workspace, *args], account,
                   timeout)


class NotARepository(InitdError):
    """File hooks need git to know what changed; the workspace is not a repository."""


def _paths(out: bytes) -> list[str]:
    return [os.fsdecode(p) for p in out.split(b"\0") if p]


def dirty_files(workspace: str, account: Account | None = None) -> list[str]:
    """Workspace-relative paths of every uncommitted change, sorted (git run as
    ``account``: root asking for a root file hook's files runs it as the agent)."""
    has_head = git(workspace, "rev-parse", "--verify", "-q", "HEAD",
                   account=account).returncode == 0
    # --relative: paths from the workspace, and only inside it, like ls-files below
    tracked = (git(workspace, "diff", "--name-only", "--no-renames", "--no-ext-diff",
                   "--relative", "-z", "HEAD", "--", account=account)
               if has_head else git(workspace, "ls-files", "-z", "--cached", account=account))
    untracked = git(workspace, "ls-files", "-z", "--others", "--exclude-standard",
                    account=account)
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
