"""``~/.discobot/{sessionId}/hooks/status.json``: the seed's HookStatusFile, versioned.

Several writers share it (the supervisor's session hooks, the hook service, the pre-commit
chain, a rerun), so it is a StateFile: locked read-modify-write, atomic writes.
The tree is owned by the agent user, so the unprivileged hook service can write later.
A hook left ``running`` by a crash is recovered at the next start.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from initd.hooks.model import Hook
from initd.hooks.runner import Result
from initd.proc import start_ticks
from initd.statefile import StateFile

VERSION = 1
Status = dict[str, Any]
RUNNING_ONLY = ("runner", "pgid", "pgidStart", "pid")  # kept only while a hook runs


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def empty() -> Status:
    return {"version": VERSION, "hooks": {}, "pendingHooks": [], "lastEvaluatedAt": None}


class StatusStore:
    def __init__(self, directory: str, owner: tuple[int, int] | None = None) -> None:
        self.directory = directory
        self.owner = owner  # (uid, gid) every file and directory here belongs to
        self.path = os.path.join(directory, "status.json")
        self.output_dir = os.path.join(directory, "output")
        # (its lock is .status.json.lock beside it)
        self.file = StateFile(self.path, empty, owner)

    @classmethod
    def for_session(cls, home: str, session_id: str,
                    owner: tuple[int, int] | None = None) -> StatusStore:
        return cls(os.path.join(home, ".discobot", session_id, "hooks"), owner)

    def output_path(self, hook_id: str) -> str:
        return os.path.join(self.output_dir, f"{hook_id}.log")

    def prepare(self) -> None:
        """Create the tree (``~/.discobot`` down to ``output/``), owned by the agent user."""
        os.makedirs(self.output_dir, exist_ok=True)
        if self.owner is None:
            return
        top = os.path.dirname(os.path.dirname(self.directory))  # ~/.discobot
        for path in (top, os.path.dirname(self.directory), self.directory, self.output_dir):
            os.chown(path, *self.owner)

    def read(self) -> Status:
        """The current status; missing or unreadable means empty (a bad file is kept
        aside as ``status.json.corrupt`` for a person to look at)."""
        data = self.file.read()
        if not isinstance(data.get("hooks"), dict):
            return empty()
        data.setdefault("pendingHooks", [])
        data.setdefault("lastEvaluatedAt", None)
        data["version"] = VERSION
        return data

    def update(self, change: Callable[[Status], object]) -> Status:
        """Read, change, write: under an exclusive lock, atomically."""
        self.prepare()
        return self.file.update(change, self.read)

    def started(self, hook: Hook, pgid: int | None = None) -> None:
        """``running``, with who runs it (this process) and the hook's process group, so
        that if this process dies the group can be found and stopped (``recover``)."""
        def change(status: Status) -> None:
            entry = _entry(status, hook)
            entry.update(lastResult="running", startedAt=now_iso(), runner=os.getpid(),
                         pgid=pgid, pgidStart=None if pgid is None else start_ticks(pgid))
        self.update(change)

    def finished(self, hook: Hook, result: Result) -> Status:
        def change(status: Status) -> None:
            entry = _entry(status, hook)
            for key in RUNNING_ONLY:
                entry.pop(key, None)
            entry.update(
                lastRunAt=now_iso(),
                lastResult="success" if result.ok else "failure",
                lastExitCode=result.exit_code,
                outputPath=result.output_path,
                runCount=entry["runCount"] + 1,
                failCount=entry["failCount"] + (0 if result.ok else 1),
                consecutiveFailures=0 if result.ok else entry["consecutiveFailures"] + 1,
                durationMs=round(result.duration * 1000, 1),
                timedOut=result.timed_out,
                cancelled=result.cancelled,
                truncated=result.truncated,
            )
        return self.update(change)

    def recover(self, types: Iterable[str] = ("session", "file", "pre-commit"),
                runner_gone: Callable[[int | None], bool] = lambda pid: True,
                ) -> list[dict[str, Any]]:
        """Hooks of ``types`` left ``running`` by a process that died (``runner_gone``
        says which did): marked failed (``interrupted``); file hooks are queued again.
        Returns their entries as they were, with the process group each left behind."""
        recovered: list[dict[str, Any]] = []
        kinds = frozenset(types)

        def change(status: Status) -> None:
            for hook_id, entry in status["hooks"].items():
                if (entry.get("lastResult") != "running" or entry.get("type") not in kinds
                        or not runner_gone(entry.get("runner"))):
                    continue
                recovered.append(dict(entry))
                for key in RUNNING_ONLY:
                    entry.pop(key, None)
                entry.update(lastResult="failure", interrupted=True, lastRunAt=now_iso(),
                             failCount=entry.get("failCount", 0) + 1,
                             consecutiveFailures=entry.get("consecutiveFailures", 0) + 1)
                if entry.get("type") == "file" and hook_id not in status["pendingHooks"]:
                    status["pendingHooks"].append(hook_id)
        if os.path.exists(self.path):
            self.update(change)
        return recovered


def _entry(status: Status, hook: Hook) -> dict[str, Any]:
    entry: dict[str, Any] = status["hooks"].setdefault(hook.id, {
        "hookId": hook.id, "hookName": hook.name, "type": hook.type, "lastRunAt": None,
        "lastResult": None, "lastExitCode": None, "outputPath": None, "runCount": 0,
        "failCount": 0, "consecutiveFailures": 0,
    })
    entry.update(hookName=hook.name, type=hook.type)
    return entry
