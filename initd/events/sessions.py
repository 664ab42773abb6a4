"""Session records (AutoAgent's design, seed 003): one per initd session, in the agent
user's ``~/.discobot/sessions/``: ``<id>.json`` is the record, ``<id>.events.jsonl`` has
a line per event fired and what came of it, and ``current`` links to the live record.
``initd sessions`` lists them.

The record is a StateFile (locked, atomic). While an event's hooks run, the record says
so (``running``); a service killed in the middle (say, during an awaited webhook)
leaves a record that still tells the truth, and the next start closes that event as
``interrupted``: the record is consistent whatever happens when.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from typing import Any

from initd import proc
from initd.hooks.changes import git
from initd.hooks.status import now_iso
from initd.statefile import StateFile

STATES = ("active", "completed", "interrupted", "failed")
KEEP_OUTPUT = 4096  # of each hook's stdout and stderr, in the event lines


def directory(home: str) -> str:
    return os.path.join(home, ".discobot", "sessions")


class Sessions:
    def __init__(self, home: str, session_id: str, workspace: str,
                 owner: tuple[int, int] | None = None) -> None:
        self.dir = directory(home)
        self.id = session_id
        self.workspace = workspace
        self.owner = owner
        self.file = StateFile(os.path.join(self.dir, f"{session_id}.json"), dict, owner)
        self.events_path = os.path.join(self.dir, f"{session_id}.events.jsonl")
        self._tokens = itertools.count(1)
        self._me = (os.getpid(), proc.start_ticks(os.getpid()))

    def open(self, command: list[str] | None = None) -> list[str]:
        """Make (or pick up) the record, mark it active and current; events a dead
        process left running are closed as interrupted. Returns their names."""
        os.makedirs(self.dir, exist_ok=True)
        if self.owner is not None:
            for path in (os.path.dirname(self.dir), self.dir):
                os.chown(path, *self.owner)
        interrupted: list[dict[str, Any]] = []
        branch, commit = _git_place(self.workspace)

        def change(record: dict[str, Any]) -> None:
            if not record:
                record.update(id=self.id, startTime=now_iso(), endTime=None,
                              workspace=self.workspace, command=(command or [""])[0],
                              args=(command or [])[1:], issuesPlanned=[],
                              issuesCompleted=[], issuesFailed=[], currentIssue=None,
                              events=0, blocked=0, lastEvent=None, running={},
                              metadata={"gitBranch": branch, "gitCommit": commit})
            record.update(status="active", endTime=None)
            for token, entry in list(record.setdefault("running", {}).items()):
                if _gone(entry.get("runner")):
                    interrupted.append(entry)
                    del record["running"][token]
        self.file.update(change)
        for entry in interrupted:
            self._append({"event": entry.get("event"), "at": now_iso(), "interrupted": True,
                          "startedAt": entry.get("startedAt"), "results": []})
        self._link_current()
        return [str(entry.get("event")) for entry in interrupted]

    def begin(self, event: str, payload: dict[str, Any]) -> str:
        """An event's hooks start to run."""
        token = f"{os.getpid()}-{next(self._tokens)}"

        def change(record: dict[str, Any]) -> None:
            record.setdefault("running", {})[token] = {
                "event": event, "startedAt": now_iso(), "runner": list(self._me)}
            _issues(record, event, payload, starting=True)
        self.file.update(change)
        return token

    def end(self, token: str | None, outcome: dict[str, Any], payload: dict[str, Any],
            ) -> None:
        """An event is done (``token`` from begin, or None when no hook ran): counted,
        and its outcome appended."""
        event = outcome["event"]

        def change(record: dict[str, Any]) -> None:
            record.setdefault("running", {}).pop(token or "", None)
            record["events"] = record.get("events", 0) + 1
            record["blocked"] = record.get("blocked", 0) + bool(outcome.get("blocked"))
            record["lastEvent"] = {"event": event, "at": now_iso(),
                                   "blocked": outcome.get("blocked"),
                                   "reason": outcome.get("reason")}
            _issues(record, event, payload, starting=False)
        self.file.update(change)
        self._append({"at": now_iso(), **outcome, "results": [
            {**r, "stdout": r.get("stdout", "")[:KEEP_OUTPUT],
             "stderr": r.get("stderr", "")[:KEEP_OUTPUT]} for r in outcome.get("results", [])]})

    def close(self, status: str) -> None:
        """The session ended: completed, interrupted or failed."""
        def change(record: dict[str, Any]) -> None:
            if record:
                record.update(status=status, endTime=now_iso())
        self.file.update(change)

    def _append(self, line: dict[str, Any]) -> None:
        data = (json.dumps(line, default=str) + "\n").encode()
        fd = os.open(self.events_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                     0o640)
        try:
            if self.owner is not None:
                os.fchown(fd, *self.owner)
            os.write(fd, data)  # one write, O_APPEND: lines from two writers never mix
        finally:
            os.close(fd)

    def _link_current(self) -> None:
        link = os.path.join(self.dir, "current")
        tmp = f"{link}.{os.getpid()}"
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        os.symlink(os.path.basename(self.file.path), tmp)
        if self.owner is not None:
            os.lchown(tmp, *self.owner)
        os.replace(tmp, link)


def _gone(runner: object) -> bool:
    """The process that marked an event running is no longer that process."""
    if not isinstance(runner, list) or len(runner) != 2 or not isinstance(runner[0], int):
        return True
    return bool(proc.start_ticks(runner[0]) != runner[1])


def _issues(record: dict[str, Any], event: str, payload: dict[str, Any],
            starting: bool) -> None:
    """AutoAgent's issue fields, kept from the events that carry an issueNumber."""
    number = payload.get("issueNumber", payload.get("issue_number"))
    if not isinstance(number, int) or isinstance(number, bool):
        return
    if starting and event == "pre_execution_start":
        record["currentIssue"] = number
        if number not in record.setdefault("issuesPlanned", []):
            record["issuesPlanned"].append(number)
    if not starting and event == "post_execution_end":
        done = "issuesCompleted" if payload.get("success") is not False else "issuesFailed"
        if number not in record.setdefault(done, []):
            record[done].append(number)
        record["currentIssue"] = None


def _git_place(workspace: str) -> tuple[str | None, str | None]:
    try:
        branch = git(workspace, "rev-parse", "--abbrev-ref", "HEAD")
        commit = git(workspace, "rev-parse", "HEAD")
    except (OSError, subprocess.SubprocessError):
        return None, None
    return (branch.stdout.decode().strip() or None if branch.returncode == 0 else None,
            commit.stdout.decode().strip() or None if commit.returncode == 0 else None)


def listing(home: str) -> list[dict[str, Any]]:
    """Every session record, newest first, with the number of its event lines."""
    found = []
    try:
        names = os.listdir(directory(home))
    except FileNotFoundError:
        return []
    for name in names:
        if not name.endswith(".json"):
            continue
        path = os.path.join(directory(home), name)
        record = StateFile(path, dict).read()
        if not record:
            continue
        try:
            with open(path[:-5] + ".events.jsonl", "rb") as f:
                record["eventLines"] = sum(1 for _ in f)
        except FileNotFoundError:
            record["eventLines"] = 0
        found.append(record)
    return sorted(found, key=lambda r: str(r.get("startTime")), reverse=True)
