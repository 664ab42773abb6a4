"""The git hook managers a repository may already use, as the pre-commit chain meets them.

Each one's install can run again at any time (``npm install`` runs husky's, lefthook's
and simple-git-hooks'), after initd's: what it then does to the chain decides which of
the two is in force until initd installs again. initd cannot stop that, so it says it,
in one line per manager the work tree configures (docs/discobot-hooks.md lists what each does).
husky 4 also needs a hand: its install keeps an existing hook (initd's chain) and so
writes no ``pre-commit`` of its own, but its stub is one script for every hook name
(``husky.sh`` reads the name from ``$0``), so a sibling's copy is the hook it would have
written. Only names and sizes are judged here: a file's contents reach no shell and no
log line.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from initd.state import agentfs

PACKAGE_LIMIT = 1 << 20  # package.json bytes read, at most
STUB_LIMIT = 64 << 10  # a husky 4 stub is under 1 KiB
HUSKY4_MARK = b"# husky"  # husky 4's lib/installer/hooks.js huskyIdentifier
HUSKY4_HELPER = "husky.sh"  # what every husky 4 stub sources from its own directory
HUSKY4_STUBS = ("commit-msg", "pre-push", "prepare-commit-msg", "post-merge",
                "post-checkout", "pre-rebase", "post-commit", "applypatch-msg")


class Manager(NamedTuple):
    name: str
    files: tuple[str, ...]  # any of these at the work tree's top: configured
    package_key: str  # or this key in package.json ("" for none)
    note: str  # what its install does to the chain: who wins, and why


MANAGERS = (
    Manager("husky 9", (".husky",), "",
            "husky 9 (.husky/): its install (npm's prepare) sets core.hooksPath to "
            ".husky/_, so git runs husky's hooks and not initd's chain until initd "
            "installs again, which chains .husky/_"),
    Manager("husky 4", (".huskyrc", ".huskyrc.json", ".huskyrc.js", "husky.config.js"),
            "husky",
            "husky 4 (package.json \"husky\"): its install keeps initd's chain as a user "
            "hook and writes no pre-commit of its own; initd runs husky's stub first from "
            "its next install"),
    Manager("lefthook", ("lefthook.yml", ".lefthook.yml", "lefthook.yaml",
                         ".lefthook.yaml", "lefthook.json", ".lefthook.json",
                         "lefthook.toml", ".lefthook.toml", "lefthook.jsonc"), "",
            "lefthook: `lefthook install` (npm install runs it) renames initd's chain to "
            "pre-commit.old and never runs it, so lefthook's hook runs alone until initd "
            "installs again and runs it first"),
    Manager("simple-git-hooks", (".simple-git-hooks.json", ".simple-git-hooks.js",
                                 ".simple-git-hooks.cjs", ".simple-git-hooks.mjs",
                                 "simple-git-hooks.json", "simple-git-hooks.js",
                                 "simple-git-hooks.cjs", "simple-git-hooks.mjs"),
            "simple-git-hooks",
            "simple-git-hooks: its install (npm install) writes its hook over initd's "
            "chain, so its hook runs alone until initd installs again and runs it first"),
    Manager("pre-commit", (".pre-commit-config.yaml", ".pre-commit-config.yml"), "",
            "the pre-commit framework: `pre-commit install` moves initd's chain to "
            "pre-commit.legacy and runs it first (migration mode): both run, initd's "
            "hooks first, until initd installs again and runs pre-commit's first"),
)


def notes(top: agentfs.Place) -> list[str]:
    """A line for each manager the work tree at ``top`` configures (none when it cannot
    be read: these are notes, the chain does not depend on them)."""
    try:
        with top.open() as tree:
            package = _package(tree)
            return [m.note for m in MANAGERS
                    if any(tree.mtime_ns(name) is not None for name in m.files)
                    or (m.package_key and m.package_key in package)]
    except OSError:
        return []


def _package(tree: agentfs.Dir) -> dict[str, object]:
    try:
        data = tree.read("package.json", PACKAGE_LIMIT)
        found = json.loads(data) if data is not None else {}
    except (OSError, ValueError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


def husky4_stub(hooks: agentfs.Dir) -> bytes | None:
    """husky 4's stub, when husky 4 is installed in ``hooks`` (its ``husky.sh`` there)
    but wrote no pre-commit: any sibling stub's bytes, which are the same for every
    name (husky 4.3.8 lib/installer/hooks.js getHookScript)."""
    try:
        if hooks.read(HUSKY4_HELPER, PACKAGE_LIMIT, whole=False) is None:
            return None
        for name in HUSKY4_STUBS:
            stub = hooks.read(name, STUB_LIMIT)
            if stub is not None and HUSKY4_MARK in stub and b'/husky.sh"' in stub:
                return stub
    except OSError:
        return None
    return None
