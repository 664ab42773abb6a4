"""``run_as: root`` hooks for an unprivileged hook service, from copies taken at boot.

The hook service runs as the agent user, and the agent can edit the workspace's hooks.
Were root to run whatever "hook X" the service names, the agent could write any script
into ``.discobot/hooks``, mark it ``run_as: root`` and have root run it. So root runs
only what it saw at boot, before the agent started: every root session and file hook is
copied then into a directory only root can read, and a request runs that copy (so a
swap of the file between a check and the exec changes nothing). A hook changed since
boot, or added since, is refused with a result that says why; the container's next
start takes the new version, before the agent runs, as it does for session hooks.

The service names only the hook: the files a root file hook gets are worked out here,
from git, as an evaluation does; nothing the service sends reaches root's hook.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from typing import NamedTuple

from initd.hooks import filehooks, runner
from initd.hooks.model import Hook
from initd.hooks.session import HookContext, refuse, run_one

SNAPSHOT_LIMIT = 2**20  # a hook script over 1 MiB is not copied (and not run as root)
TYPES = ("session", "file")  # pre-commit hooks run as whoever commits


class Snapshot(NamedTuple):
    hook: Hook  # as discovered at boot, its path pointing at the copy
    original: str  # where the hook lives in the workspace (or the image)
    content: bytes  # what it said at boot


class RootHooks:
    def __init__(self, hooks: Sequence[Hook]) -> None:
        self.directory = tempfile.mkdtemp(prefix="initd-root-hooks.")  # 0700, root's
        self.snapshots: dict[str, Snapshot] = {}
        self.unreadable: dict[str, tuple[Hook, str]] = {}  # not copied, and why
        for hook in hooks:
            if hook.run_as == "root" and hook.type in TYPES:
                self._take(hook)

    def _take(self, hook: Hook) -> None:
        try:
            with open(hook.path, "rb") as f:
                content = f.read(SNAPSHOT_LIMIT + 1)
        except OSError as err:
            self.unreadable[hook.id] = (hook, f"could not be read at boot ({err.strerror})")
            return
        if len(content) > SNAPSHOT_LIMIT:
            self.unreadable[hook.id] = (hook, f"is over {SNAPSHOT_LIMIT} bytes")
            return
        copy = os.path.join(self.directory, os.path.basename(hook.path))
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o700)
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        self.snapshots[hook.id] = Snapshot(hook._replace(path=copy), hook.path, content)

    def run(self, hook_id: str, ctx: HookContext,
            cancel: threading.Event | None = None) -> runner.Result | None:
        """Run root's copy of ``hook_id``; None when there is no such root hook at all."""
        snapshot = self.snapshots.get(hook_id)
        if snapshot is None:
            if hook_id not in self.unreadable:
                return None
            hook, why = self.unreadable[hook_id]
            return refuse(hook, ctx, f"run_as: root hook {hook.path} {why}, so root "
                                "will not run it")
        changed = self._changed(snapshot)
        if changed is not None:
            return refuse(snapshot.hook, ctx, f"run_as: root hook {snapshot.original} "
                                f"{changed} since initd started, so root will not run it "
                                "(root hooks are fixed at boot, before the agent runs; "
                                "restart the container to use the new version)")
        if snapshot.hook.type == "file":  # its files from git here, not from the service
            return filehooks.run_on_dirty(snapshot.hook, ctx, cancel)
        return run_one(snapshot.hook, ctx, cancel=cancel)

    @staticmethod
    def _changed(snapshot: Snapshot) -> str | None:
        try:
            with open(snapshot.original, "rb") as f:
                now = f.read(SNAPSHOT_LIMIT + 1)
        except FileNotFoundError:
            return "was removed"
        except OSError as err:
            return f"cannot be read ({err.strerror})"
        return None if now == snapshot.content else "was changed"

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)
