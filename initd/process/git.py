"""initd's one way of calling git: a scrubbed environment (no calling git's GIT_*), a
timeout, capped output, as the agent when root acts for it, from ``/``, in a process
group of its own; cancellable (an Event: boot's stop signal), since git may wait on
what the agent planted (a FIFO as its config) for its whole timeout.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence

from initd.process import spawn
from initd.process.users import Account

CANCEL_POLL = 0.05  # seconds between looks at the cancel Event while git runs
STOP_GRACE = 0.2  # seconds git's group gets after TERM, before KILL: git is ours to stop


class Ran(subprocess.CompletedProcess[bytes]):
    """git's result; ``cancelled``: stopped (or never started) because the cancel Event
    was set, its output whatever came before."""

    def __init__(self, args: list[str], returncode: int, stdout: bytes, stderr: bytes,
                 cancelled: bool = False) -> None:
        super().__init__(args, returncode, stdout, stderr)
        self.cancelled = cancelled


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
        cancel: threading.Event | None = None) -> Ran:
    """``git ARGS`` as ``account`` when root acts for it: whatever the agent's repository
    or ~/.gitconfig configures (core.fsmonitor, filters, hooks, includes) then runs as
    the agent, never as root (invariant 8). None: as this process's own user. At most
    ``limit`` bytes of output are held (a million untracked files with long names must
    not cost root gigabytes): past that, git is stopped and OSError says so. Once
    ``cancel`` is set, git's group is stopped at once and the result says ``cancelled``
    (``check`` raises for it: its code is the signal's)."""
    argv = ["git", *args]
    if cancel is not None and cancel.is_set():
        done = Ran(argv, -signal.SIGTERM, b"", b"", cancelled=True)
    else:
        done = _run(argv, account, timeout, limit, cancel)
    if check:
        done.check_returncode()
    return done


def _run(argv: list[str], account: Account | None, timeout: float, limit: int,
         cancel: threading.Event | None) -> Ran:
    drop = account is not None and account.uid != os.geteuid()
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=environment(account), stdin=subprocess.DEVNULL, cwd="/",
                          process_group=0,  # (its hooks, fsmonitor, helpers: stopped with it)
                          user=account.uid if drop and account else None,
                          group=account.gid if drop and account else None,
                          extra_groups=list(account.groups) if drop and account else None,
                          ) as child:
        try:
            out, err = _read_capped(child, limit, timeout, " ".join(argv[-3:]), cancel)
        except BaseException:
            _stop(child)
            raise
        cancelled = out is None
        if cancelled:
            _stop(child)
        code = child.wait()
    return Ran(argv, code, out or b"", err, cancelled=cancelled)


def _stop(child: subprocess.Popen[bytes]) -> None:
    """TERM to git's group, STOP_GRACE, KILL (spawn.stop: never a wait on a pipe)."""
    try:
        watched = spawn.Child(child)
    except OSError:  # no pidfd (EMFILE): git itself, at once; its group is PID 1's
        child.kill()
        return
    spawn.stop(watched, signal.SIGTERM, STOP_GRACE)


def _read_capped(child: subprocess.Popen[bytes], limit: int, timeout: float, what: str,
                 cancel: threading.Event | None) -> tuple[bytes | None, bytes]:
    """git's stdout and stderr, polled (spawn.wait_fds); stdout None once ``cancel`` is set."""
    assert child.stdout is not None and child.stderr is not None
    deadline = time.monotonic() + timeout
    got: dict[int, list[bytes]] = {child.stdout.fileno(): [], child.stderr.fileno(): []}
    size = 0
    open_fds = set(got)
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired(child.args, timeout)
        if cancel is not None and cancel.is_set():
            return None, b"".join(got[child.stderr.fileno()])
        for fd in spawn.wait_fds(open_fds, left if cancel is None else min(left, CANCEL_POLL)):
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                open_fds.discard(fd)
                continue
            got[fd].append(chunk)
            size += len(chunk)
            if size > limit:
                raise OSError(f"git …{what}: over {limit} bytes of output: stopped")
    return b"".join(got[child.stdout.fileno()]), b"".join(got[child.stderr.fileno()])


def git(workspace: str, *args: str, account: Account | None = None,
        timeout: float = 120, cancel: threading.Event | None = None) -> Ran:
    """git in ``workspace`` (as ``account``, see run), trusting that one path (the
    agent's workspace may belong to root, or git run as the agent may read root's):
    initd's only way of calling git there."""
    return run(["-c", f"safe.directory={workspace}", "-C", workspace, *args], account,
               timeout, cancel=cancel)
