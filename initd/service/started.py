"""The file hooks of the session's start (invariant 15), as the hook service runs them:
discovered as the guard snapshot has them beside the hooks as they are now, and each
compared with the snapshot before it runs, as a discobot event script is
(events/guardset.changed): one the agent changed since is that hook's failure, whose
words the model is told (a re-prompt), never its own check passing for it."""

from __future__ import annotations

import os
from collections.abc import Callable

from initd.events import guardset
from initd.hooks import discovery, filehooks, workspacefiles
from initd.hooks.context import HookContext
from initd.hooks.discovery import Found
from initd.hooks.launch import refuse
from initd.hooks.model import Hook
from initd.process.runner import Result
from initd.state.snapshot import Snapshot


def discover(workspace: str, image_dir: str, guards: Snapshot) -> Found:
    """The hooks as they are now, and every file hook of the snapshot as it was then:
    one the agent removed, or made another kind, still runs."""
    live = discovery.for_workspace(workspace, image_dir)
    with workspacefiles.replaying(guards):
        started = discovery.for_workspace(workspace, image_dir)
    kept = {h.id: h for h in started.hooks if h.type == "file"}
    hooks = [h for h in live.hooks if h.id not in kept] + list(kept.values())
    hooks.sort(key=lambda h: (h.directory != image_dir, os.path.basename(h.path)))
    return live._replace(hooks=tuple(hooks))


def changed(hook: Hook, guards: Snapshot) -> str | None:
    """Why ``hook`` cannot run as the session's start had it (its file changed since
    the snapshot, or cannot be read now); None when it can, or it was not there then."""
    if hook.type != "file" or not guards.covers(hook.path):
        return None
    why = guardset.changed(hook.path, guards)
    return None if why is None else (
        f"{hook.path} {why} since the session started: the check of its start cannot "
        "run (a change to a hook takes effect at initd's next start)")


def checked(gate: filehooks.Gate | None, guards: Snapshot, ctx: HookContext
            ) -> filehooks.Gate:
    """``gate`` (or running the hook), after the comparison with the snapshot: a hook
    changed since is a failure that says so (recorded, logged), which the model is told."""
    def check(hook: Hook, go: Callable[[], Result]) -> Result:
        why = changed(hook, guards)
        if why is not None:
            return refuse(hook, ctx, why, fixable=True)
        return go() if gate is None else gate(hook, go)
    return check
