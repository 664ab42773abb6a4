"""``~/.discobot/{sessionId}/hooks/``: ``status.json`` (discobot's hooks spec's HookStatusFile,
versioned), the hooks' logs in ``output/``, the NUL-separated file lists and the
``.last-eval`` marker.

Several writers share it (the supervisor's session hooks, the hook service, the
pre-commit chain, a rerun), so status.json is a StateFile: locked read-modify-write,
atomic writes. The tree is the agent user's, so root reaches it only through agentfs
(no link followed, only new files written, each given to the agent), and everything read
back is cleaned to the schema first: the agent may have written any of it (invariant 8).
A hook left ``running`` by a crash is recovered at the next start.
"""

from __future__ import annotations

import errno
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any, BinaryIO

from initd.hooks.model import Hook
from initd.hooks.status.schema import Outcome, Status, clean, empty
from initd.process.runner import Result
from initd.process.spawn import start_ticks
from initd.state.agentfs import Place
from initd.state.clock import now_iso
from initd.state.statefile import StateFile

RUNNING_ONLY = ("runner", "runnerStart", "pgid", "pgidStart")  # while a hook runs
LOG_READ_LIMIT = 16 * 2**20  # a log is capped at 10 MiB (runner.LOG_CAP) plus a marker
MARKER = ".last-eval"
CLOCK_REALTIME_COARSE = 5  # Linux's (the time module names only the precise one)
FULL = (errno.ENOSPC, errno.EDQUOT)  # a result that met these is kept, and written later
KEEP_LIMIT = 1000  # results kept in memory at most (oldest first out, said)
RETRY = 2.0  # seconds between tries to write what was kept
_KEEPING: weakref.WeakSet[StatusStore] = weakref.WeakSet()  # stores of this process with
# results kept (backlog_problems: the supervisor's health says so)


class StatusStore:
    def __init__(self, directory: str | Place, owner: tuple[int, int] | None = None) -> None:
        self.place = directory if isinstance(directory, Place) else Place(directory,
                                                                          owner=owner)
        self.owner = self.place.owner  # (uid, gid) everything here belongs to
        self.output = self.place.child("output")
        self.file = StateFile(self.place, "status.json", empty)  # lock: .status.json.lock
        self._kept: list[Callable[[Status], None]] = []  # results a full disk refused
        self._kept_lock = threading.Lock()
        self._retrying = False
        self.kept_problem: str | None = None  # why results are kept (health: degraded)

    @classmethod
    def for_session(cls, state: Place, session_id: str) -> StatusStore:
        """The session's store in initd's state (statefile.root): no link on the way."""
        return cls(state.child(session_id, "hooks"))

    @property
    def directory(self) -> str:
        return self.place.path

    @property
    def path(self) -> str:
        return self.file.path

    @property
    def output_dir(self) -> str:
        return self.output.path

    def output_path(self, hook_id: str) -> str:
        return os.path.join(self.output_dir, f"{hook_id}.log")

    def prepare(self) -> None:
        """Create the tree (``~/.discobot`` down to ``output/``), owned by the agent user."""
        self.output.open(create=True).close()

    def read(self) -> Status:
        """The current status; missing or unreadable means empty (a bad file is kept
        aside as ``status.json.corrupt`` for a person to look at)."""
        return clean(self.file.read())

    def update(self, change: Callable[[Status], object]) -> Status:
        """Read, change, write: under an exclusive lock, atomically."""
        return self.file.update(change, clean)

    def new_log(self, hook_id: str) -> tuple[BinaryIO, str]:
        """A fresh ``output/<id>.log`` (the last run's replaced), open for the runner."""
        with self.output.open(create=True) as directory:
            return directory.create(f"{hook_id}.log"), self.output_path(hook_id)

    def read_log(self, hook_id: str) -> bytes | None:
        with self.output.open() as directory:
            return directory.read(f"{hook_id}.log", LOG_READ_LIMIT)

    def write_list(self, hook_id: str, data: bytes) -> str:
        """``output/<id>.files``: the NUL-separated names a file hook runs on."""
        with self.output.open(create=True) as directory:
            directory.write(f"{hook_id}.files", data)
        return os.path.join(self.output_dir, f"{hook_id}.files")

    def new_marker(self) -> None:
        """``.last-eval.next``, made now: its mtime is the file system's own "now"."""
        with self.place.open(create=True) as directory:
            directory.create(f"{MARKER}.next").close()

    def marker_ns(self) -> int | None:
        """When the last evaluation began (None: there was none)."""
        with self.place.open(create=True) as directory:
            return directory.mtime_ns(MARKER)

    def advance_marker(self) -> None:
        with self.place.open(create=True) as directory:
            directory.rename(f"{MARKER}.next", MARKER)

    def started(self, hook: Hook, pgid: int | None = None) -> None:
        """``running``, with who runs it (this process) and the hook's process group, so
        that if this process dies the group can be found and stopped (``recover``) by its
        successor: a process of the same user, never root (invariant 8)."""
        me = os.getpid()

        def change(status: Status) -> None:
            entry = _entry(status, hook)
            entry.update(lastResult=Outcome.RUNNING, startedAt=now_iso(), runner=me,
                         runnerStart=start_ticks(me), pgid=pgid,
                         pgidStart=None if pgid is None else start_ticks(pgid))
        self.update(change)

    def finished(self, hook: Hook, result: Result) -> Status:
        return self.finished_all([(hook, result)])

    def finished_all(self, runs: Sequence[tuple[Hook, Result]]) -> Status:
        """The results of ``runs``, in order, in one write. When the disk is full the
        results are kept in memory (the error is raised all the same, for the caller to
        say) and written, in order, with the next write or by a retry every RETRY
        seconds: a hook that ended never stays ``running`` once the disk allows."""
        def change(status: Status) -> None:
            for hook, result in runs:
                _finish(_entry(status, hook), result)
        return self._write(change)

    def _write(self, change: Callable[[Status], None] | None) -> Status:
        with self._kept_lock:
            kept = list(self._kept)

        def apply(status: Status) -> None:
            for earlier in kept:
                earlier(status)
            if change is not None:
                change(status)
        try:
            written = self.update(apply)
        except OSError as err:
            if err.errno in FULL and change is not None:
                self._keep(change, err)
            raise
        with self._kept_lock:
            del self._kept[:len(kept)]
            if not self._kept:
                self.kept_problem = None
                _KEEPING.discard(self)
        return written

    def _keep(self, change: Callable[[Status], None], err: OSError) -> None:
        with self._kept_lock:
            self._kept.append(change)
            del self._kept[:-KEEP_LIMIT]
            self.kept_problem = (f"{self.path} cannot be written ({err.strerror}): "
                                 f"{len(self._kept)} hook result(s) kept in memory, "
                                 "written when the disk allows")
            _KEEPING.add(self)
            if self._retrying:
                return
            self._retrying = True
        try:
            threading.Thread(target=self._retry, name="status-kept", daemon=True).start()
        except RuntimeError:  # no thread: the next write carries them
            self._retrying = False

    def _retry(self) -> None:
        """Until what was kept is written (the disk freed), or this process ends."""
        while True:
            time.sleep(RETRY)
            with self._kept_lock:
                if not self._kept:
                    self._retrying = False  # (under the lock: a new _keep starts another)
                    return
            try:
                self._write(None)
            except Exception:  # a full disk still, a lock held: the next round
                continue

    def recover(self, types: Iterable[str] = ("session", "file", "pre-commit",
                                              "devcontainer"),
                runner_gone: Callable[[dict[str, Any]], bool] = lambda entry: True,
                ) -> list[dict[str, Any]]:
        """Hooks of ``types`` left ``running`` by a process that died (``runner_gone``
        says, from the entry, which did): marked failed (``interrupted``); file hooks are
        queued again. Returns their entries as they were (what the agent may have
        written: only a process of the agent's own uid may act on them)."""
        recovered: list[dict[str, Any]] = []
        kinds = frozenset(types)

        def change(status: Status) -> None:
            for hook_id, entry in status["hooks"].items():
                if (entry.get("lastResult") != Outcome.RUNNING or entry.get("type") not in kinds
                        or not runner_gone(entry)):
                    continue
                recovered.append(dict(entry))
                for key in RUNNING_ONLY:
                    entry.pop(key, None)
                entry.update(lastResult=Outcome.FAILURE, interrupted=True, lastRunAt=now_iso(),
                             runCount=entry["runCount"] + 1,  # a run, ended: failCount
                             failCount=entry["failCount"] + 1,  # never exceeds runCount
                             consecutiveFailures=entry["consecutiveFailures"] + 1)
                if entry.get("type") == "file" and hook_id not in status["pendingHooks"]:
                    status["pendingHooks"].append(hook_id)
        hooks = self.read()["hooks"].values()
        if any(entry.get("lastResult") == Outcome.RUNNING for entry in hooks):
            self.update(change)
        return recovered


def _finish(entry: dict[str, Any], result: Result) -> None:
    # (a run that ended says so itself: lastRunAt, durationMs; and whether a record of it
    # running was written, which depends on how busy the machine was, never shows)
    for key in (*RUNNING_ONLY, "startedAt", "interrupted"):
        entry.pop(key, None)
    entry.update(
        lastRunAt=now_iso(),
        lastResult=Outcome.SUCCESS if result.ok else Outcome.FAILURE,
        lastExitCode=result.exit_code,
        outputPath=result.output_path,
        runCount=entry["runCount"] + 1,
        failCount=entry["failCount"] + (0 if result.ok else 1),
        consecutiveFailures=0 if result.ok else entry["consecutiveFailures"] + 1,
        durationMs=round(result.duration * 1000, 1),
        timedOut=result.timed_out,
        cancelled=result.cancelled,
        truncated=result.truncated,
        killedByLimit=result.limit,
    )


def _entry(status: Status, hook: Hook) -> dict[str, Any]:
    entry: dict[str, Any] = status["hooks"].setdefault(hook.id, {
        "hookId": hook.id, "hookName": hook.name, "type": hook.type, "lastRunAt": None,
        "lastResult": None, "lastExitCode": None, "outputPath": None, "runCount": 0,
        "failCount": 0, "consecutiveFailures": 0,
    })
    entry.update(hookName=hook.name, type=hook.type)
    return entry


def backlog_problems() -> list[str]:
    """Why results of this process are kept in memory (a full disk), for its health."""
    return [store.kept_problem for store in list(_KEEPING) if store.kept_problem]
