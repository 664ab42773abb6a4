"""initd's one way of calling git: a scrubbed environment (no calling git's GIT_*), a
timeout, capped output, as the agent when root acts for it, from ``/``."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence

from initd.users import Account


def scrubbed(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without a calling git's GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE…: a hook or
    a commit may be what called us, and git must find the workspace's repository."""
    return {k: v for k, v in env.items() if not k.startswith("GIT_")}


def environment(account: Account | None = None) -> dict[str, str]:
    """initd's own git calls see none of a calling git's GIT_DIR/GIT_INDEX_FILE (a hook
    or a commit may be what called us); as ``account``, with its HOME and USER."""
    env = scrubbed(os.environ)
    if account is not None:
        env.update(account.env())
    return env


OUTPUT_LIMIT = 64 * 2**20  # of git's stdout: a workspace's changed names, with room


def run(args: Sequence[str], account: Account | None = None, timeout: float = 120,
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
                          env=environment(account), stdin=subprocess.DEVNULL, cwd="/",
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
    import math
    import select
    import time

    assert child.stdout is not None and child.stderr is not None
    deadline = time.monotonic() + timeout
    got: dict[int, list[bytes]] = {child.stdout.fileno(): [], child.stderr.fileno(): []}
    size = 0
    # poll, not epoll: it makes no descriptor of its own (root at its limit, EMFILE)
    poller, open_fds = select.poll(), set(got)
    for fd in open_fds:
        poller.register(fd, select.POLLIN)
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired(child.args, timeout)
        for fd, _ in poller.poll(math.ceil(left * 1000)):
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                poller.unregister(fd)
                open_fds.discard(fd)
                continue
            got[fd].append(chunk)
            size += len(chunk)
            if size > limit:
                raise OSError(f"git …{what}: over {limit} bytes of output: stopped")
    return b"".join(got[child.stdout.fileno()]), b"".join(got[child.stderr.fileno()])


def git(workspace: str, *args: str, account: Account | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """git in ``workspace`` (as ``account``, see run), trusting that one path (the
    agent's workspace may belong to root, or git run as the agent may read root's):
    initd's only way of calling git there."""
    return run(["-c", f"safe.directory={workspace}", "-C", workspace, *args], account,
                   timeout)
