"""Trust in the workspace's hooks, by content, not by name (what Claude Code users ask for:
anthropics/claude-code#62519). ``initd hooks trust`` records the content hash of every
hook the workspace defines, in any dialect (discobot scripts of every type included);
with enforcement on (``--trust``, ``INITD_TRUST=1``; off by default), a workspace hook
whose hash is not recorded (new, or changed since) does not run, and its result says so.
The image's hooks and the user's own config files are trusted.

The store (``/var/lib/initd/trust.json`` by default) is root's: the agent may read it,
not approve its own hooks. Hashes cover what a hook does: a script's bytes; a config
hook's event, action, fields and condition, and the file it is written in.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from typing import Any, NamedTuple

from initd import agentfs
from initd.clock import now_iso
from initd.hooks.model import Hook
from initd.paths import DEFAULT_TRUST_FILE
from initd.statefile import StateFile


class Entry(NamedTuple):
    key: str  # a script's path, or "file#key" for a hook in a config file
    digest: str
    label: str  # for people


SCRIPT_LIMIT = 2**20  # a hook script over 1 MiB is never trusted (root would not copy it)


def for_script(path: str, content: bytes | None = None) -> Entry | None:
    """A discobot script (any type) as ``content`` says (the exact bytes that will run:
    root's copy of a root hook), else as its file says now; None when it cannot be read,
    is not a regular file or is over SCRIPT_LIMIT (it will not run)."""
    if content is None:
        try:
            content, _ = agentfs.read_regular(path, SCRIPT_LIMIT, whole=True)
        except OSError:  # (Unsafe too: over SCRIPT_LIMIT, a FIFO)
            return None
    if len(content) > SCRIPT_LIMIT:  # root's copy, handed in
        return None
    return Entry(path, hashlib.sha256(path.encode() + b"\0" + content).hexdigest(), path)


class Trust:
    def __init__(self, path: str = DEFAULT_TRUST_FILE, enforce: bool = False,
                 image_dir: str | None = None) -> None:
        self.file = StateFile.at(path, lambda: {"version": 1, "trusted": {}},
                                 limit=16 * 2**20)
        self.enforce = enforce
        self.image_dir = image_dir  # its hooks are the image's: trusted
        self._cache: tuple[object, dict[str, Any]] | None = None

    def refusal(self, hook: Hook, content: bytes | None = None) -> str | None:
        """Why a discobot script may not run now, or None. ``content``: the bytes that
        will run, when they are not the file's own (root's boot-time copy): those are
        what is judged, never the file read again (the agent may swap it in between)."""
        if not self.enforce or hook.directory == self.image_dir:
            return None
        entry = for_script(hook.path, content)
        return None if self.allows(entry) else self.why_not(entry)

    def recorded(self) -> dict[str, Any]:
        try:
            info = os.stat(self.file.path)
            stamp: object = (info.st_mtime_ns, info.st_size, info.st_ino)
        except OSError:
            stamp = None
        if self._cache is None or self._cache[0] != stamp:
            trusted = self.file.read().get("trusted")
            self._cache = (stamp, trusted if isinstance(trusted, dict) else {})
        return self._cache[1]

    def allows(self, entry: Entry | None) -> bool:
        """May this workspace hook run? (Always, unless enforcement is on.)"""
        if not self.enforce:
            return True
        if entry is None:
            return False
        seen = self.recorded().get(entry.key)
        return isinstance(seen, dict) and seen.get("digest") == entry.digest

    def why_not(self, entry: Entry | None) -> str:
        seen = self.recorded().get(entry.key) if entry is not None else None
        state = "changed since it was trusted" if seen else "not trusted yet"
        return (f"{'this hook' if entry is None else entry.label} is {state}: a person must "
                f"approve it (initd hooks trust --workspace …) before it runs "
                f"(trust enforcement is on; store: {self.file.path})")

    def approve(self, entries: Iterable[Entry]) -> list[tuple[Entry, str]]:
        """Record these hashes; returns each with new | changed | unchanged."""
        done: list[tuple[Entry, str]] = []

        def change(data: dict[str, Any]) -> None:
            trusted = data.setdefault("trusted", {})
            for entry in entries:
                seen = trusted.get(entry.key)
                state = ("unchanged" if isinstance(seen, dict) and
                         seen.get("digest") == entry.digest else
                         "changed" if seen else "new")
                trusted[entry.key] = {"digest": entry.digest, "label": entry.label,
                                      "at": now_iso()}
                done.append((entry, state))
        self.file.update(change)
        self._cache = None
        return done
