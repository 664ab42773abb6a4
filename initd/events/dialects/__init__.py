"""Every dialect's loader into the one model, and ``load_all`` in the order hooks run:
discobot scripts (the image's, then the workspace's), ``.iteratr.hooks.yml``, nyzhi's
``config.toml`` files, AutoAgent's ``config.json``, agent-pipelines' files, Claude Code's
``settings.json`` files."""

from __future__ import annotations

import os

from initd.config.log import Logger
from initd.events.dialect import Dialect, Where
from initd.events.dialects import autoagent, claude, discobot, iteratr, nyzhi, pipelines
from initd.events.loading import Collected
from initd.events.model import DialectName

DIALECTS: dict[DialectName, Dialect] = {d.name: d for d in (
    discobot.DIALECT, iteratr.DIALECT, nyzhi.DIALECT, autoagent.DIALECT, pipelines.DIALECT,
    claude.DIALECT)}


def load_all(workspace: str, image_dir: str, home: str,
             snapshots: dict[DialectName, Collected] | None = None) -> Collected:
    """Every dialect's hooks, in the order they run (a dialect read once per session:
    its snapshot, when given)."""
    where, found = Where(workspace, image_dir, home), Collected()
    for dialect in DIALECTS.values():
        taken = (snapshots or {}).get(dialect.name)
        found.extend(taken if taken is not None else dialect.load(where))
    return found


class Cache:
    """``load_all`` again only when one of the files it reads (or could read) changed: the
    service asks on every event, and most events change nothing.

    A dialect with ``snapshot`` (Claude Code's) is read once, when the service starts, as
    Claude Code "captures a snapshot of hooks at startup" and "uses this snapshot
    throughout the session" (its hooks reference, "Configuration Safety"): an agent that
    rewrites ``.claude/settings.json`` (or ``settings.local.json``, or the user's) cannot
    remove a deny hook before its next tool call. A changed file is said once in the log,
    and takes effect at the next start of the hook service."""

    def __init__(self, workspace: str, image_dir: str, home: str,
                 log: Logger | None = None) -> None:
        self.args = (workspace, image_dir, home)
        self.where = Where(workspace, image_dir, home)
        self.stamp: tuple[object, ...] | None = None
        self.found = Collected()
        self.log = log
        # the snapshots, taken now: the hook service starts with the session (their stamps
        # first: a file changed while it is read is a change, reported)
        fixed = [d for d in DIALECTS.values() if d.snapshot]
        self.snapshot_stamps = {d.name: _stamps(d.files(self.where)) for d in fixed}
        self.snapshots = {d.name: d.load(self.where) for d in fixed}
        self.said: set[tuple[object, ...]] = set()  # changes already reported

    def paths(self) -> list[str]:
        return [path for d in DIALECTS.values() for path in d.files(self.where)]

    def get(self) -> Collected:
        stamp = _stamps(self.paths())
        if stamp != self.stamp:
            for name, was in self.snapshot_stamps.items():
                self._changed(name, DIALECTS[name].files(self.where), was)
            self.found = load_all(*self.args, snapshots=self.snapshots)
            self.stamp = stamp
        return self.found

    def _changed(self, name: DialectName, files: list[str], was: tuple[object, ...]) -> None:
        """A snapshot's file changed since the start: said once per change."""
        now = _stamps(files)
        if now == was or now in self.said:
            return
        self.said.add(now)
        changed = [path for path, then, is_ in zip(files, was, now, strict=True)
                   if then != is_]
        if self.log is not None:
            self.log.warning(f"{DIALECTS[name].title} settings changed during the session: "
                             "the hooks of its start still run; the change takes effect at "
                             "the next start", files=changed)


def _stamps(paths: list[str]) -> tuple[object, ...]:
    return tuple(_stamp(path) for path in paths)


def _stamp(path: str) -> object:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (path, info.st_mtime_ns, info.st_size, info.st_ino)
