"""``run_as: root`` session hooks of an agent that is not root, from copies taken at boot.

Root runs the workspace's code only before the agent runs (ARCHITECTURE.md, invariant
11): the one kind of root hook is a blocking session hook (hooks/model.py refuses a root
file hook and a root background hook when they load). Even before the agent, a process
of the agent's uid may run: one a user session hook left, or one that outlived an
earlier container on a volume (initd as a subreaper, in a dev container). Were root to
run whatever file is there when its turn comes, such a process could rewrite a root
hook, or swap an approved file's bytes between ``--trust``'s hash and the exec. So right
after discovery, before any hook runs, root copies every root session hook into a
directory only root can read, checks that the copy says what discovery read, and runs
only those copies. ``--trust`` judges exactly the bytes copied.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence

from initd.hooks import discovery, workspacefiles
from initd.hooks.context import Snapshot
from initd.hooks.launch import ROOT_TYPES
from initd.hooks.model import Hook
from initd.state import agentfs

SNAPSHOT_LIMIT = discovery.ROOT_COPY_LIMIT  # a hook script over it is not copied (not run as root)


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
        try:  # (under a person's verb as root: through the one door, no link followed)
            content, info = workspacefiles.read(hook.path, SNAPSHOT_LIMIT + 1)
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
                "will not run it (root hooks are fixed at boot, before any hook runs)")

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)
