"""The session's guard set: every format's hook files the agent can write, as they were
before its first instruction (ARCHITECTURE.md, invariant 15).

``take`` reads them as the hook service always has (as the agent: links followed, never
a FIFO, never past a limit) and keeps each read's outcome in a Snapshot
(state/snapshot.py): the workspace's and the home's config files of every format
(sources.py), the workspace's ``.discobot/hooks`` listed, and the head of each file in it
(discobot's front matter: which scripts are hooks, on which events), VS Code's hooks
folders listed and each ``*.json`` in them, with those its settings add. Under initd it runs
as a process of its own (``main``), started by root's supervisor as the agent user
before the agent (supervisor/guards.py), writing into a memory file root then seals; a
hook service run by hand takes its own when it starts.

The hook service loads its lifecycle-event hooks from it for the whole session
(dialects.Cache, within ``workspacefiles.replaying``): a change the agent makes to those
files, from its first instruction on, takes effect at initd's next start, and a
restarted service gets the same snapshot. The image's own files (its hooks directory,
Claude Code's managed settings) are root's: read when the service starts.
"""

from __future__ import annotations

import hashlib
import os

from initd.events import sources
from initd.hooks import frontmatter, workspacefiles
from initd.state.snapshot import Snapshot

DIGEST_LIMIT = 2**20  # bytes of a script hashed (hooks/trust.py's SCRIPT_LIMIT: no more runs)
HASH_BUDGET = 64 * 2**20  # bytes one snapshot hashes; past it, a script cannot be compared


def take(workspace: str, home: str) -> Snapshot:
    """The agent's hook files, read now, as the loaders will read them from it."""
    configs, directories = sources.agents(workspace, home)
    snapshot = Snapshot()
    for path in configs:
        snapshot.record_read(path, sources.CONFIG_LIMIT, True, workspacefiles.read)
    scripts = os.path.join(workspace, sources.HOOKS_DIR[1])
    for directory in directories:
        if directory == scripts:
            _scripts(snapshot, directory, workspace)
        else:
            _folder(snapshot, directory)
    # the files and folders VS Code's settings add (sources.py), as they were too
    files, folders = sources.vscode_added(workspace, home, lambda path: snapshot.read(
        path, sources.CONFIG_LIMIT, True)[0])
    for path in files:
        if not snapshot.covers(path):
            snapshot.record_read(path, sources.CONFIG_LIMIT, True, workspacefiles.read)
    for folder in folders:
        if not snapshot.covers(folder):
            _folder(snapshot, folder)
    return snapshot


def _scripts(snapshot: Snapshot, directory: str, workspace: str) -> None:
    """discobot's hooks directory: listed, and the head and hash of each script in it."""
    snapshot.record_names(directory, listing)

    def hook(path: str, limit: int, whole: bool) -> tuple[bytes, os.stat_result, str]:
        return workspacefiles.read_hook(path, limit, workspace)

    for name in snapshot.lists[directory].get("names", ()):
        if name.startswith("."):  # (discovery reads no hidden file: never a hook)
            continue
        path = os.path.join(directory, name)
        runs = snapshot.record_read(path, frontmatter.HEAD_LIMIT, False, hook)
        if runs is not None and runs != path:  # a link: the file it names, as it was
            snapshot.record_read(runs, frontmatter.HEAD_LIMIT, False, workspacefiles.read)
        if runs is not None:  # and the whole script's hash: its body past the head
            snapshot.record_digest((path, runs), _digest(runs, snapshot))


def _folder(snapshot: Snapshot, directory: str) -> None:
    """A folder of config files (VS Code's hooks folders): listed, and each ``*.json`` in
    it read whole, as a config file is."""
    snapshot.record_names(directory, listing)
    for name in snapshot.lists[directory].get("names", ()):
        if sources.vscode_file(name):
            snapshot.record_read(os.path.join(directory, name), sources.CONFIG_LIMIT, True,
                                 workspacefiles.read)


def _digest(path: str, snapshot: Snapshot | None = None) -> str:
    """sha256 of the whole file (as ``digest:HEX``), or why it has none: over
    DIGEST_LIMIT, past the snapshot's budget for hashing, or unreadable."""
    if snapshot is not None and snapshot.hashed >= HASH_BUDGET:
        return f"not hashed: the guard snapshot hashes at most {HASH_BUDGET} bytes"
    try:
        data, _ = workspacefiles.read(path, DIGEST_LIMIT, whole=True)
    except OSError as err:
        return f"not hashed: {err.strerror or err}"
    if snapshot is not None:
        snapshot.hashed += len(data)
    return "digest:" + hashlib.sha256(data).hexdigest()


def listing(directory: str) -> tuple[list[str], int]:
    """A hooks directory's names as discovery lists them (discovery.listing's bounds)."""
    return workspacefiles.names(directory, workspacefiles.MAX_NAMES, workspacefiles.SCAN_LIMIT)


def changed(path: str, snapshot: Snapshot) -> str | None:
    """How the discobot script ``path`` differs now from the snapshot's (its head, the
    bytes its front matter is read from, its size, or the hash of all its bytes):
    "changed", "cannot be read now (why)", "cannot be compared (why)"; None when it
    does not."""
    with workspacefiles.replaying(snapshot):
        was = _head(path)
    now = _head(path)
    if now != was:
        return f"cannot be read now ({now})" if isinstance(now, str) else "changed"
    if isinstance(now, str):
        return None  # (unreadable then and now: it fails to run as it did)
    kept = snapshot.digest(path)
    if kept is None or not kept.startswith("digest:"):
        return f"cannot be compared ({kept or 'no hash was taken'})"
    return None if _digest(path) == kept else "changed"


def _head(path: str) -> tuple[int, bytes] | str:
    try:
        head, info = workspacefiles.read(path, frontmatter.HEAD_LIMIT)
    except OSError as err:
        return str(err.strerror)
    return info.st_size, head


def covering(snapshot: Snapshot, workspace: str, home: str) -> Snapshot:
    """A failed snapshot stands in for every file the agent can write of every format:
    each reads as its failure (so a guard among them blocks, invariant 12)."""
    if snapshot.failed is not None and not snapshot.covered:
        configs, directories = sources.agents(workspace, home)
        snapshot.covered = frozenset((*configs, *directories))
    return snapshot


def main(argv: list[str]) -> int:
    """The reader: ``python -I -c READER FD WORKSPACE HOME`` (READER calls this), the
    snapshot written to the memory file FD (root's supervisor seals it once this has
    exited 0). Not ``-m``: runpy's imports are most of a small process's start."""
    fd, workspace, home = int(argv[0]), argv[1], argv[2]
    from initd.state import snapshot

    snapshot.write(fd, take(workspace, home).encode())
    return 0

