"""Every dialect's loader into the one model, and ``load_all`` in the order hooks run: the
order of sources.py's table, whose every row names a format and its module here
(discobot scripts, the image's then the workspace's, ``.iteratr.hooks.yml``, nyzhi's
``config.toml`` files, AutoAgent's ``config.json``, agent-pipelines' files, Claude Code's
``settings.json`` files, Codex's, VS Code's hook files, Gemini CLI's ``settings.json``
files, Cursor's ``hooks.json`` files)."""

from __future__ import annotations

import os
from importlib import import_module

from initd.config.log import Logger
from initd.config.problems import NOTE, Problem
from initd.events import sources
from initd.events.dialect import Dialect, Where
from initd.events.loading import Collected
from initd.events.model import DialectName
from initd.events.wire import Wire, is_shim
from initd.hooks import workspacefiles
from initd.state.snapshot import Snapshot

DIALECTS: dict[DialectName, Dialect] = {
    name: import_module(f"initd.events.dialects.{name}").DIALECT for name in sources.SOURCES}
# how each agent that calls hooks calls initd (initd emit --from NAME)
WIRES: dict[DialectName, Wire] = {name: d.wire for name, d in DIALECTS.items() if d.wire}


def load_all(workspace: str, image_dir: str, home: str) -> Collected:
    """Every dialect's hooks, in the order they run."""
    where, found = Where(workspace, image_dir, home), Collected()
    for dialect in DIALECTS.values():
        found.extend(dialect.load(where))
    shims = [h for h in found.hooks if h.action == "command" and is_shim(h.label)]
    for hook in shims:  # initd's own line in the agent's file: the way in, not a hook
        found.hooks.remove(hook)
        found.problems.append(Problem(hook.source, hook.key, "initd emit --from: the agent "
                                      "sends its events to initd here; initd runs every "
                                      "other hook itself", NOTE))
    return found


class Cache:
    """Every dialect's hooks as the session's guard snapshot has the agent's files
    (events/guardset.py; taken now when none is given), and the image's as they are: read
    again only when one of the files loading reads (or could read) changed, and the
    service asks on every event.

    The snapshot is the agent's files as they were before its first instruction
    (invariant 15), as Claude Code "captures a snapshot of hooks at startup" and "uses
    this snapshot throughout the session" (its hooks reference, "Configuration Safety"),
    for every format: an agent that rewrites ``.claude/settings.json`` (or any format's
    file, or a discobot script's front matter) cannot remove a guard before its next
    tool call. A change is said once in the log, and takes effect at initd's next start."""

    def __init__(self, workspace: str, image_dir: str, home: str,
                 log: Logger | None = None, guards: Snapshot | None = None) -> None:
        from initd.events import guardset

        self.args = (workspace, image_dir, home)
        self.where = Where(workspace, image_dir, home)
        self.guards = guardset.covering(
            guards if guards is not None else guardset.take(workspace, home), workspace, home)
        self.stamp: tuple[object, ...] | None = None
        self.found = Collected()
        self.log = log
        self.said: set[tuple[str, object]] = set()  # changes already reported

    def paths(self) -> list[str]:
        return [path for d in DIALECTS.values() for path in d.files(self.where)]

    def get(self) -> Collected:
        paths = self.paths()
        stamp = _stamps(paths)
        if stamp != self.stamp:
            self._changed(paths, stamp)
            with workspacefiles.replaying(self.guards):
                self.found = load_all(*self.args)
            self._say(self.found)
            self.stamp = stamp
        return self.found

    def _say(self, found: Collected) -> None:
        """Each problem of loading that no stand-in says when its event fires (a warning,
        an event's name no agent has: a typo in a guard's event is never silent), in
        the log once."""
        if self.log is None:
            return
        standing = {stand_in.reason for stand_in in found.unread}
        for problem in found.problems:
            if problem.text in standing or ("problem", str(problem)) in self.said:
                continue
            self.said.add(("problem", str(problem)))
            say = self.log.info if problem.severity == NOTE else self.log.warning
            say("hook config problem", problem=str(problem))

    def _changed(self, paths: list[str],
                 stamps: tuple[tuple[str, int, int, int] | None, ...]) -> None:
        """What the agent changed of its files since the snapshot (one rewritten, removed
        or added to a hooks directory): said once per change."""
        changed = []
        for path, now in zip(paths, stamps, strict=True):
            if path in self.guards.lists:
                continue  # (a directory: its files are compared one by one)
            if self.guards.covers(path):
                differs = (None if now is None else now[1:]) != self.guards.stamp(path)
            else:  # a file the snapshot does not have, in a directory it listed
                differs = os.path.dirname(path) in self.guards.lists
            if differs and (path, now) not in self.said:
                self.said.add((path, now))
                changed.append(path)
        if changed and self.log is not None:
            self.log.warning("hook files changed during the session: the guards of its "
                             "start still hold; the change takes effect at initd's next "
                             "start", files=changed)


def _stamps(paths: list[str]) -> tuple[tuple[str, int, int, int] | None, ...]:
    return tuple(_stamp(path) for path in paths)


def _stamp(path: str) -> tuple[str, int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (path, info.st_mtime_ns, info.st_size, info.st_ino)
