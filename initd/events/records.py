"""Session records (AutoAgent's hooks design): one per initd session, in the agent
user's ``~/.discobot/sessions/``: ``<id>.json`` is the record, ``<id>.events.jsonl`` has
a line per event fired and what came of it, and ``current`` links to the live record.
``initd sessions`` lists them.

The record is a StateFile (locked, atomic): the session's metadata and what is in
flight. The event lines are the log (appended, one write each); counts and the last
event are read from them. An event whose hooks take longer than MARK_AFTER is marked
``running`` in the record until it ends, so a service killed in the middle (say, during
an awaited webhook) leaves a record that still tells the truth, and the next start
closes that event as ``interrupted``: consistent whatever happens when. (Quick events,
nearly all of them, cost one appended line and no fsync.)
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import threading
from typing import Any

from initd.process import spawn
from initd.process.git import git
from initd.state.agentfs import Place
from initd.state.clock import now_iso
from initd.state.statefile import StateFile

KEEP_OUTPUT = 4096  # of each hook's stdout and stderr, in the event lines
MARK_AFTER = 0.05  # seconds an event's hooks run before the record says it is running


class Marker:
    """One event in flight: marked running in the record if it lasts (a timer), never
    after it has ended (the lock)."""

    def __init__(self, token: str, event: str) -> None:
        self.token = token
        self.event = event
        self.lock = threading.Lock()
        self.ended = self.written = False
        self.timer: threading.Timer | None = None


class Sessions:
    def __init__(self, state: Place, session_id: str, workspace: str) -> None:
        self.place = state.child("sessions")  # never through a link
        self.dir = self.place.path
        self.id = session_id
        self.workspace = workspace
        self.file = StateFile(self.place, f"{session_id}.json", dict)
        self.events_name = f"{session_id}.events.jsonl"
        self.events_path = os.path.join(self.dir, self.events_name)
        self._tokens = itertools.count(1)
        self._me = (os.getpid(), spawn.start_ticks(os.getpid()))

    def open(self, command: list[str] | None = None) -> list[str]:
        """Make (or pick up) the record, mark it active and current; events a dead
        process left running are closed as interrupted. Returns their names."""
        interrupted: list[dict[str, Any]] = []
        branch, commit = _git_place(self.workspace)

        def change(record: dict[str, Any]) -> None:
            if not record:
                record.update(id=self.id, startTime=now_iso(), endTime=None,
                              workspace=self.workspace, command=(command or [""])[0],
                              args=(command or [])[1:], issuesPlanned=[],
                              issuesCompleted=[], issuesFailed=[], currentIssue=None,
                              running={}, metadata={"gitBranch": branch, "gitCommit": commit})
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

    def begin(self, event: str) -> Marker:
        """An event's hooks start to run: if they are still running MARK_AFTER from now,
        the record says so."""
        marker = Marker(f"{os.getpid()}-{next(self._tokens)}", event)
        marker.timer = threading.Timer(MARK_AFTER, self._mark, (marker,))
        marker.timer.daemon = True
        marker.timer.start()
        return marker

    def _mark(self, marker: Marker) -> None:
        with marker.lock:
            if marker.ended:
                return
            self.file.update(lambda record: record.setdefault("running", {}).update({
                marker.token: {"event": marker.event, "startedAt": now_iso(),
                               "runner": list(self._me)}}))
            marker.written = True

    def end(self, marker: Marker | None, outcome: dict[str, Any],
            payload: dict[str, Any]) -> None:
        """An event is done (``marker`` from begin, or None when no hook ran): its line
        appended; the record changed only if it said "running", or an issue moved on."""
        event = outcome["event"]
        written = False
        if marker is not None:
            if marker.timer is not None:
                marker.timer.cancel()
            with marker.lock:
                marker.ended = True
                written = marker.written
        issue = _issue_event(event, payload)
        if written or issue:
            def change(record: dict[str, Any]) -> None:
                if marker is not None:
                    record.setdefault("running", {}).pop(marker.token, None)
                if issue:
                    _issues(record, event, payload)
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
        with self.place.open(create=True) as directory:
            directory.append(self.events_name, data, 0o640)  # one write: lines never mix

    def _link_current(self) -> None:
        with self.place.open(create=True) as directory:
            directory.symlink(self.file.name, "current")


def _gone(runner: object) -> bool:
    """The process that marked an event running is no longer that process."""
    if not isinstance(runner, list) or len(runner) != 2 or not isinstance(runner[0], int):
        return True
    return bool(spawn.start_ticks(runner[0]) != runner[1])


def _issue_event(event: str, payload: dict[str, Any]) -> bool:
    """Does this event move AutoAgent's issue fields (an issue starts, or ends)?"""
    number = payload.get("issueNumber", payload.get("issue_number"))
    return (event in ("pre_execution_start", "post_execution_end")
            and isinstance(number, int) and not isinstance(number, bool))


def _issues(record: dict[str, Any], event: str, payload: dict[str, Any]) -> None:
    number = payload.get("issueNumber", payload.get("issue_number"))
    if event == "pre_execution_start":
        record["currentIssue"] = number
        if number not in record.setdefault("issuesPlanned", []):
            record["issuesPlanned"].append(number)
    else:
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


EVENTS_LIMIT = 64 * 2**20  # of one session's event lines read for the listing


def listing(state: Place) -> list[dict[str, Any]]:
    """Every session record, newest first, with what its event lines tell: how many
    events, how many blocked, the last one. Read through agentfs (root may list them:
    a link, a FIFO or a huge file planted there is skipped, never followed)."""
    from initd.state.agentfs import Unsafe

    place = state.child("sessions")
    found = []
    try:
        with place.open() as where:
            names = os.listdir(where.fd)
            for name in names:
                if not name.endswith(".json") or name.startswith("."):
                    continue
                record = StateFile(place, name, dict).read()
                if not record:
                    continue
                record.update(events=0, blocked=0, lastEvent=None)
                try:
                    raw = where.read(name[:-5] + ".events.jsonl", EVENTS_LIMIT, whole=False)
                except Unsafe:
                    raw = None
                for text in (raw or b"").splitlines():
                    try:
                        line = json.loads(text)
                    except (ValueError, RecursionError):
                        continue  # a line cut by a crash: the others still count
                    if not isinstance(line, dict):
                        continue
                    record["events"] += 1
                    record["blocked"] += bool(line.get("blocked"))
                    record["lastEvent"] = {k: line.get(k) for k in ("event", "at",
                                                                    "blocked", "reason")}
                found.append(record)
    except (FileNotFoundError, Unsafe):
        return []
    return sorted(found, key=lambda r: str(r.get("startTime")), reverse=True)
