"""Hooks a process left ``running`` in status.json when it died: recorded as failed."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from initd.config.log import Logger
from initd.errors import shown
from initd.hooks.model import ID
from initd.hooks.status.store import StatusStore
from initd.process import spawn


def any_runner(entry: dict[str, Any]) -> bool:
    """For ``recover`` at boot: whoever ran it, it is not running any more."""
    return True


def runner_gone(entry: dict[str, Any]) -> bool:
    """For ``recover`` in a process started later: the runner (its pid and its start
    time: a pid alone may have been reused) no longer exists."""
    pid, started = entry.get("runner"), entry.get("runnerStart")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return True
    now = spawn.start_ticks(pid)
    return now is None or (isinstance(started, int) and now != started)


def recover_interrupted(store: StatusStore, gone: Callable[[dict[str, Any]], bool],
                        grace: float, log: Logger) -> list[str]:
    """Hooks whose runner died mid-run: recorded as failed (file hooks queued again).
    The process group each left behind is stopped only by a process of the tree's own
    user (the hook service, after its predecessor): root never signals a group it read
    from a file the agent can write (invariant 8; the supervisor stops a dead service's
    hooks by the session it started, spawn.stop_process_session)."""
    ours = store.owner is None or store.owner[0] == os.geteuid()
    recovered: list[str] = []
    try:
        entries = store.recover(runner_gone=gone)
    except Exception as err:  # a link planted on the way, a full disk, a bug of ours in
        # reading what the agent wrote: the hooks and the agent still run (invariant 7)
        log.warning("hook status not recovered", status=store.path,
                        error=f"{type(err).__name__}: {err}")
        return recovered
    for entry in entries:
        pgid, hook_id = entry.get("pgid"), entry.get("hookId")
        stopped = ours and isinstance(pgid, int) and not isinstance(pgid, bool) and \
            spawn.stop_leftover_group(pgid, entry.get("pgidStart"), grace)
        log.warning("hook was still running when the process running it stopped: "
                        "recorded as failed", hook=hook_id if isinstance(hook_id, str)
                        and ID.fullmatch(hook_id) else shown(hook_id), status=store.path,
                        stopped_group=pgid if stopped else None)
        recovered.append(str(hook_id))
    return recovered
