"""``run_as: root`` hooks of an agent that is not root, from copies taken at boot.

The agent can edit the workspace's hooks, and after boot it is hostile. Were root to run
whatever file is there when it runs a hook, the agent could write any script into
``.discobot/hooks``, mark it ``run_as: root`` and have root run it, or swap an approved
file's bytes between ``--trust``'s hash and the exec. So right after discovery, before
any hook (a user session hook included) or the agent runs, root copies every root session
and file hook into a directory only root can read, checks that the copy says what
discovery read, and from then on runs only those copies: blocking and background session
hooks, and the file hooks the service asks for. ``--trust`` judges exactly the bytes
copied. A root file hook changed since boot, or added since, is refused with a result
that says why; the container's next start takes the new version, before the agent runs.

The service names only the hook: the files a root file hook gets are worked out here,
from git run as the agent, as an evaluation does; nothing the service sends reaches
root's hook.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Sequence

from initd import agentfs
from initd.hooks import discovery, filehooks, runner
from initd.hooks.context import HookContext, Snapshot
from initd.hooks.model import Hook
from initd.hooks.run import ROOT_TYPES, refuse, run_one

SNAPSHOT_LIMIT = 2**20  # a hook script over 1 MiB is not copied (and not run as root)


class RootHooks:
    def __init__(self, hooks: Sequence[Hook]) -> None:
        self.directory = tempfile.mkdtemp(prefix="initd-root-hooks.")  # 0700, root's
        self.place = agentfs.Place(self.directory)
        self.snapshots: dict[str, Snapshot] = {}
        self.unreadable: dict[str, tuple[Hook, str]] = {}  # not copied, and why
        for hook in hooks:
            if hook.run_as == "root" and hook.type in ROOT_TYPES:
                self._take(hook)

    def _take(self, hook: Hook) -> None:
        try:
            content, info = agentfs.read_regular(hook.path, SNAPSHOT_LIMIT + 1)
        except OSError as err:
            self.unreadable[hook.id] = (hook, f"could not be read at boot ({err.strerror})")
            return
        if len(content) > SNAPSHOT_LIMIT:
            self.unreadable[hook.id] = (hook, f"is over {SNAPSHOT_LIMIT} bytes")
            return
        # The copy must say what discovery read: nothing of initd's runs yet, but a
        # process the agent left (initd as a subreaper, in a dev container) may.
        again = discovery.parse(hook.path, hook.directory, content[:discovery.HEAD_LIMIT], info)
        if again != hook:
            self.unreadable[hook.id] = (hook, "changed while initd read it at boot")
            return
        name = os.path.basename(hook.path)
        with self.place.open() as directory:
            directory.write(name, content, 0o700)
        self.snapshots[hook.id] = Snapshot(hook._replace(path=os.path.join(
            self.directory, name)), hook.path, content)

    def copy_of(self, hook: Hook) -> Snapshot | str:
        """Root's copy of ``hook``, or why there is none (a refusal's reason)."""
        snapshot = self.snapshots.get(hook.id)
        if snapshot is not None and hook.path in (snapshot.original, snapshot.hook.path):
            return snapshot
        if hook.id in self.unreadable:
            found, why = self.unreadable[hook.id]
            return f"run_as: root hook {found.path} {why}, so root will not run it"
        return (f"run_as: root hook {hook.path} was not there when initd started, so root "
                "will not run it (root hooks are fixed at boot, before the agent runs; "
                "restart the container to use it)")

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
            now, _ = agentfs.read_regular(snapshot.original, SNAPSHOT_LIMIT + 1)
        except FileNotFoundError:
            return "was removed"
        except OSError as err:
            return f"cannot be read ({err.strerror})"
        return None if now == snapshot.content else "was changed"

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)
