"""status.json's schema (discobot's hooks spec's HookStatusFile, versioned): an empty one,
what an entry holds, and what was read back made to fit it (the agent may have written
any of it)."""

from __future__ import annotations

import enum
from typing import Any, TypeGuard

VERSION = 1
Status = dict[str, Any]
COUNTERS = ("runCount", "failCount", "consecutiveFailures")


class Outcome(enum.StrEnum):
    """A hook's ``lastResult`` in status.json."""

    SUCCESS = "success"
    FAILURE = "failure"
    RUNNING = "running"  # (a runner that died leaves it: recovery.py records a failure)


def empty() -> Status:
    return {"version": VERSION, "hooks": {}, "pendingHooks": [], "lastEvaluatedAt": None}


TEXTS = ("hookId", "hookName", "type", "lastRunAt", "lastResult", "outputPath", "startedAt")
NUMBERS = ("lastExitCode", "runner", "runnerStart", "pgid", "pgidStart")


def clean(data: Status) -> Status:
    """What was read, made to fit the schema: entries that are not objects dropped,
    counters that are not whole numbers reset, every other field of the wrong type null
    (``"type": ["a"]`` is unhashable where a name is looked up), pending hooks that are not
    names dropped."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return empty()
    entries = {}
    for hook_id, entry in hooks.items():
        if not isinstance(entry, dict):
            continue
        for key in COUNTERS:
            if not _whole(entry.get(key)) or entry[key] < 0:
                entry[key] = 0
        for key in TEXTS:
            if not isinstance(entry.get(key, ""), str):
                entry[key] = None
        for key in NUMBERS:
            if key in entry and entry[key] is not None and not _whole(entry[key]):
                entry[key] = None
        entries[hook_id] = entry
    pending = data.get("pendingHooks")
    last = data.get("lastEvaluatedAt")
    return {**data, "version": VERSION, "hooks": entries,
            "pendingHooks": [h for h in pending if isinstance(h, str)]
            if isinstance(pending, list) else [],
            "lastEvaluatedAt": last if isinstance(last, str) else None}


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
