"""Every dialect's loader into the one model, and ``load_all`` in the order hooks run:
discobot scripts (the image's, then the workspace's), ``.iteratr.hooks.yml``, nyzhi's
``config.toml`` files, AutoAgent's ``config.json``, agent-pipelines' files, Claude Code's
``settings.json`` files."""

from __future__ import annotations

import os

from initd.config import paths
from initd.config.log import Logger
from initd.events.dialects import autoagent, claude, discobot, iteratr, nyzhi, pipelines
from initd.events.dialects.common import Collected
from initd.hooks import discovery


def load_all(workspace: str, image_dir: str, home: str,
             claude_hooks: Collected | None = None) -> Collected:
    """Every dialect's hooks (Claude Code's: ``claude_hooks`` when given, its snapshot)."""
    found = Collected()
    found.extend(discobot.load(workspace, image_dir))
    found.extend(iteratr.load(workspace))
    found.extend(nyzhi.load(workspace, home))
    found.extend(autoagent.load(workspace, home))
    found.extend(pipelines.load(workspace, home))
    found.extend(claude_hooks if claude_hooks is not None else claude.load(workspace, home))
    return found


class Cache:
    """``load_all`` again only when one of the files it reads (or could read) changed: the
    service asks on every event, and most events change nothing.

    Claude Code's hooks are the snapshot taken when the service started, as Claude Code
    "captures a snapshot of hooks at startup" and "uses this snapshot throughout the
    session" (its hooks reference, "Configuration Safety"): an agent that rewrites
    ``.claude/settings.json`` (or ``settings.local.json``, or the user's) cannot remove a
    deny hook before its next tool call. A changed file is said once in the log, and takes
    effect at the next start of the hook service."""

    def __init__(self, workspace: str, image_dir: str, home: str,
                 log: Logger | None = None) -> None:
        self.args = (workspace, image_dir, home)
        self.stamp: tuple[object, ...] | None = None
        self.found = Collected()
        self.log = log
        # the snapshot, taken now: the hook service starts with the session (its stamp
        # first: a file changed while it is read is a change, reported)
        self.claude_stamp = tuple(_stamp(path) for path, _ in claude.files(workspace, home))
        self.claude = claude.load(workspace, home)
        self.said: set[tuple[object, ...]] = set()  # changes already reported

    def paths(self) -> list[str]:
        workspace, image_dir, home = self.args
        workspace_hooks = paths.workspace_hooks(workspace)
        found = [image_dir, workspace_hooks, os.path.join(workspace, iteratr.FILE),
                 *(path for path, _ in nyzhi.files(workspace, home)),
                 os.path.join(home, ".autoagent", "config.json"),
                 autoagent.workspace_file(workspace), pipelines.global_file(home),
                 *(os.path.join(workspace, name) for name in pipelines.STAGE_FILES),
                 *(path for path, _ in claude.files(workspace, home))]
        for directory in (image_dir, workspace_hooks):  # a script edited in place
            try:
                names, _ = discovery.listing(directory)  # (bounded, as discovery reads)
            except OSError:
                continue
            found += [os.path.join(directory, n) for n in names]
        return found

    def get(self) -> Collected:
        stamp = tuple(_stamp(path) for path in self.paths())
        if stamp != self.stamp:
            workspace, _, home = self.args
            now = tuple(_stamp(path) for path, _ in claude.files(workspace, home))
            if now != self.claude_stamp and now not in self.said:
                self.said.add(now)
                changed = [path for (path, _), was, is_ in zip(
                    claude.files(workspace, home), self.claude_stamp, now, strict=True)
                    if was != is_]
                if self.log is not None:
                    self.log.warning("Claude Code settings changed during the session: the "
                                     "hooks of its start still run; the change takes "
                                     "effect at the next start", files=changed)
            self.found = load_all(*self.args, claude_hooks=self.claude)
            self.stamp = stamp
        return self.found


def _stamp(path: str) -> object:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (path, info.st_mtime_ns, info.st_size, info.st_ino)
