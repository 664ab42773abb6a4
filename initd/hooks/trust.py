"""Trust in the workspace's hooks, by content, not by name (what Claude Code users ask for:
anthropics/claude-code#62519). ``initd hooks trust`` records the content hash of every
hook the workspace defines, in any dialect (discobot scripts of every type included);
with enforcement on (``--trust``, ``INITD_TRUST=1``; off by default), a workspace hook
whose hash is not recorded (new, or changed since) does not run, and its result says so.
The image's hooks and the user's own config files are trusted.

The store (hooks/truststore.py) is root's, 0600, and holds hashes only: the agent can
neither approve its own hooks nor read it. So the hook service, which runs as the agent,
asks root over its channel (``asking``: supervisor/hookservice.py answers with
``verdict``). Hashes cover what a hook does: a script's bytes; a config hook's event,
action, fields and condition, and the file it is written in.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from initd.config.paths import DEFAULT_TRUST_FILE
from initd.hooks import truststore, workspacefiles
from initd.hooks.model import Hook
from initd.state.clock import now_iso


class Entry(NamedTuple):
    key: str  # a script's path, or "file#key" for a hook in a config file
    digest: str
    label: str  # for people (a command, often): printed, never stored


SCRIPT_LIMIT = 2**20  # a hook script over 1 MiB is never trusted (root would not copy it)
Ask = Callable[[str, str], str | None]  # (key, digest) -> None when approved, else why not
# What the agent's side is told of a hook not approved, whatever the reason: the same
# words for a hook a person approved as it was before, one approved elsewhere, one never
# seen, and a store root cannot read (its log says which), and never a path of root's:
# the agent may ask about any key, and must learn nothing of what the store holds.
UNAPPROVED = ("not approved as it is now: a person must approve it (initd hooks trust "
              "--workspace …) before it runs (trust enforcement is on)")


def for_script(path: str, content: bytes | None = None) -> Entry | None:
    """A discobot script (any type) as ``content`` says (the exact bytes that will run:
    root's copy of a root hook), else as its file says now; None when it cannot be read,
    is not a regular file or is over SCRIPT_LIMIT (it will not run). Under a verb's guard
    (workspacefiles.py) the file is read through the door: no link, the owner's only."""
    if content is None:
        try:
            content, _ = workspacefiles.read(path, SCRIPT_LIMIT, whole=True)
        except OSError:  # (Unsafe too: over SCRIPT_LIMIT, a FIFO, a link under a guard)
            return None
    if len(content) > SCRIPT_LIMIT:  # root's copy, handed in
        return None
    return Entry(path, hashlib.sha256(path.encode() + b"\0" + content).hexdigest(), path)


class Trust:
    def __init__(self, path: str = DEFAULT_TRUST_FILE, enforce: bool = False,
                 image_dir: str | None = None, ask: Ask | None = None) -> None:
        self.store = truststore.Store(path)
        self.enforce = enforce
        self.image_dir = image_dir  # its hooks are the image's: trusted
        self.ask = ask  # set in the hook service: root judges, from its store
        self._cache: tuple[object, dict[str, Any], str | None] | None = None
        self.notes: tuple[str, ...] = ()  # what the last approve changed of an older store

    @property
    def path(self) -> str:
        return self.store.path

    def asking(self, ask: Ask) -> Trust:
        """The same, judged by ``ask`` (root, over the service's channel)."""
        return Trust(self.path, self.enforce, self.image_dir, ask)

    def refusal(self, hook: Hook, content: bytes | None = None) -> str | None:
        """Why a discobot script may not run now, or None. ``content``: the bytes that
        will run, when they are not the file's own (root's boot-time copy): those are
        what is judged, never the file read again (the agent may swap it in between)."""
        if not self.enforce or hook.directory == self.image_dir:
            return None
        return self.refused(for_script(hook.path, content))

    def refused(self, entry: Entry | None) -> str | None:
        """Why the hook ``entry`` describes may not run now, or None: the one question
        every caller asks (a script, an event hook, a devcontainer.json stage)."""
        return None if self.allows(entry) else self.why_not(entry)

    def allows(self, entry: Entry | None) -> bool:
        """May this workspace hook run? (Always, unless enforcement is on.)"""
        if not self.enforce:
            return True
        return entry is not None and self._judge(entry) is None

    def why_not(self, entry: Entry | None) -> str:
        why = self._judge(entry) if entry is not None else None
        return (f"{'this hook' if entry is None else entry.label} is "
                f"{why or self._tail('not trusted yet')}")

    def approves(self, key: str, digest: str) -> tuple[bool, str | None]:
        """Does the store approve ``digest`` for ``key``? With why it could not be read."""
        recorded, problem = self._recorded()
        seen = recorded.get(key)
        return isinstance(seen, dict) and seen.get("digest") == digest, problem

    def verdict(self, key: str, digest: str) -> str | None:
        """None when the store approves ``digest`` for ``key``; else why not, for a person
        (root's own verbs): the agent's side is told UNAPPROVED instead (``answer``)."""
        recorded, problem = self._recorded()
        if problem is not None:
            return f"not trusted: the approvals cannot be read: {problem}"
        seen = recorded.get(key)
        if isinstance(seen, dict) and seen.get("digest") == digest:
            return None
        return self._tail("changed since it was trusted" if seen else "not trusted yet")

    def approve(self, entries: Iterable[Entry]) -> list[tuple[Entry, str]]:
        """Record these hashes; returns each with new | changed | unchanged (``notes``:
        what reading an older store changed). Raises truststore.Refused, OSError."""
        done: list[tuple[Entry, str]] = []

        def change(trusted: dict[str, dict[str, Any]]) -> None:
            for entry in entries:
                seen = trusted.get(entry.key)
                state = ("unchanged" if seen is not None and seen["digest"] == entry.digest
                         else "changed" if seen else "new")
                trusted[entry.key] = {"digest": entry.digest, "at": now_iso()}
                done.append((entry, state))
        self.notes = self.store.update(change).notes
        self._cache = None
        return done

    def _judge(self, entry: Entry) -> str | None:
        if self.ask is not None:
            return self.ask(entry.key, entry.digest)
        return self.verdict(entry.key, entry.digest)

    def _tail(self, state: str) -> str:
        return (f"{state}: a person must approve it (initd hooks trust --workspace …) before "
                f"it runs (trust enforcement is on; store: {self.path})")

    def _recorded(self) -> tuple[dict[str, Any], str | None]:
        """The approvals (read again only when the file changed), or why they cannot be."""
        try:
            info = os.stat(self.path, follow_symlinks=False)
            stamp: object = (info.st_mtime_ns, info.st_size, info.st_ino, info.st_mode)
        except OSError:
            stamp = None
        if self._cache is None or self._cache[0] != stamp:
            try:
                self._cache = (stamp, self.store.read().trusted, None)
            except truststore.Refused as err:
                self._cache = (stamp, {}, str(err))
            except OSError as err:  # root's 0700 directory, for anyone else
                self._cache = (stamp, {}, f"{self.path}: {err.strerror} (the store is root's)")
        return self._cache[1], self._cache[2]


_stores: dict[str, Trust] = {}  # root's, by path: each keeps its cache across requests


def answer(settings: Mapping[str, str], key: str,
           digest: str) -> tuple[dict[str, object], str | None]:
    """Root's reply to the hook service's ``trust`` request (its fields checked), from the
    store the service was started with (``settings``: its environment, root's making): a
    stat of the store and a dict look-up (the store is read again only when it changed).
    With it, for root's log only, why the store could not be read. Only a key of the
    service's workspace is looked up (the service asks of no other): of any other, a
    "yes" would confirm the agent's guess of a hook's path and bytes that a person
    approved anywhere, so it is UNAPPROVED, whatever the store holds."""
    path = settings.get("INITD_TRUST_FILE")
    if settings.get("INITD_TRUST") != "1" or not path:
        return {"trusted": False, "why": "not trusted: root was started without --trust"}, None
    trust = _stores.get(path)
    if trust is None:
        trust = _stores[path] = Trust(path, enforce=True)
    approved, problem = trust.approves(key, digest)
    approved &= _within(key, settings.get("INITD_WORKSPACE", ""))
    return ({"trusted": True} if approved else {"trusted": False, "why": UNAPPROVED}), problem


def _within(key: str, workspace: str) -> bool:
    """Whether ``key`` (a script's path, or a config file's path then ``#`` and its key)
    names a file under ``workspace``, as written (no ``..``, no ``//``)."""
    file = key.partition("#")[0]
    top = os.path.normpath(workspace) if workspace else ""
    return bool(top) and os.path.normpath(file) == file and file.startswith(
        top.rstrip("/") + "/")
