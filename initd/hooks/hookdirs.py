"""Where the chain goes, and what it does to what is already there, through agentfs
(ARCHITECTURE.md, invariant 8: no link followed, no file of the agent's opened for
anything but a bounded read, what is written the repository owner's).

Direct, when git reads ``.git/hooks``: the chain is ``.git/hooks/pre-commit``. A hook
there that is not initd's is the repository's own: it is moved (renamed: bytes, mode and
owner stay) to ``.git/initd/own/pre-commit``, beside a link to each of its siblings, so
that it runs under its own name with its own files around it (husky's stubs read their
name from ``$0`` and source ``husky.sh`` beside them). A manager that later writes over
the chain, or moves it aside (lefthook's ``.old``, pre-commit's ``.legacy``), is taken
over at the next install: its hook becomes the own hook, and initd's leftover goes.

Overlay, when ``core.hooksPath`` sends git elsewhere (husky 9's ``.husky/_``, a committed
``.githooks``, a global one): initd writes nothing there. It sets the repository's own
``core.hooksPath`` to ``.git/initd/hooks``, whose chain runs the previous directory's
``pre-commit`` in place and whose forwarders run its other hooks, and keeps the previous
value to put back, exactly, at uninstall. It never sets core.hooksPath where none was
set (lefthook and pre-commit refuse to install while one is).
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable

from initd.errors import InitdError
from initd.hooks import managers
from initd.hooks.gitrepo import HOOK, INITD_DIR, OVERLAY_DIR, OWN_DIR, Repo
from initd.hooks.gitscripts import FORWARDED, MARKER, forwarder
from initd.state import agentfs

ENTRIES = 4096  # names read in a hooks directory, at most: past that, refused
SAME = 4 << 20  # bytes compared when a manager wrote its hook again, at most
STATE = "hooksPath.json"  # in .git/initd: the core.hooksPath initd overlays
REPLACED = "pre-commit.replaced"  # in .git/initd: an own hook a manager wrote over
LEFTOVER = f"{HOOK}."  # the chain a manager moved aside: pre-commit.old, .legacy…


def managed(directory: agentfs.Dir, name: str) -> bool:
    """Whether ``name`` is a file initd wrote (its marker near the top); a link, a FIFO or
    a directory never is."""
    try:
        head = directory.read(name, 4096, anyone=True, whole=False)
    except (agentfs.Unsafe, IsADirectoryError):
        return False
    return head is not None and MARKER.encode() in head


def _same(a: agentfs.Dir, b: agentfs.Dir, name: str) -> bool:
    try:
        one = a.read(name, SAME, anyone=True)
        return one is not None and one == b.read(name, SAME, anyone=True)
    except OSError:
        return False


def _leftovers(hooks: agentfs.Dir) -> list[str]:
    return sorted(name for name, link in hooks.names(ENTRIES)
                  if name.startswith(LEFTOVER) and not link and managed(hooks, name))


def _move(src: agentfs.Dir, name: str, dst: agentfs.Dir, new: str) -> None:
    """``name`` in ``src`` becomes ``new`` in ``dst``; a relative symbolic link (``ln -s
    ../../scripts/pre-commit .git/hooks/``) is made anew there, naming the same path from
    its new directory (moved as it is, it named another, and the hook never ran)."""
    try:
        target, _ = src.readlink(name)
    except OSError:  # (EINVAL: no link)
        target = "/"
    if os.path.isabs(target):
        src.move(name, dst, new)
        return
    dst.symlink(os.path.relpath(os.path.normpath(os.path.join(src.path, target)), dst.path),
                new)
    src.remove(name)


# --- direct: .git/hooks ----------------------------------------------------------------

def install_direct(repo: Repo, script: str) -> list[str]:
    said: list[str] = []
    own_path = os.path.join(repo.common_dir, INITD_DIR, OWN_DIR, HOOK)
    with repo.at("hooks").open(create=True) as hooks, \
            repo.at(INITD_DIR, OWN_DIR).open(create=True) as own:
        leftovers = _leftovers(hooks)
        if hooks.mtime_ns(HOOK) is not None and not managed(hooks, HOOK):
            if own.mtime_ns(HOOK) is not None:
                said.append(_set_aside(repo, hooks, own, leftovers))
            _move(hooks, HOOK, own, HOOK)
            said.append(f"the repository's own hook {repo.hook} (not initd's) moved to "
                        f"{own_path}: it runs first, under its own name")
        elif (own.mtime_ns(HOOK) is None and hooks.mtime_ns("pre-commit.original")
              is not None and not managed(hooks, "pre-commit.original")):
            _move(hooks, "pre-commit.original", own, HOOK)  # where initd kept it before
        for name in leftovers:
            hooks.remove(name)
        if own.mtime_ns(HOOK) is None:
            stub = managers.husky4_stub(hooks)
            if stub is not None:
                own.write(HOOK, stub, 0o755)
                said.append(f"husky 4's stub (the one it writes for every hook) put at "
                            f"{own_path}: husky kept initd's chain and wrote no pre-commit")
        hooks.write(HOOK, script.encode(), 0o755)
        _link_siblings(hooks, own)
    return said


def _set_aside(repo: Repo, hooks: agentfs.Dir, own: agentfs.Dir,
               leftovers: list[str]) -> str:
    """A manager wrote its hook where the chain was, while an own hook was kept: that
    one goes where the manager would have put it had initd not been there."""
    if _same(own, hooks, HOOK):
        own.remove(HOOK)  # the same manager installing again
        return "the repository's own hook was written again by its manager: chained"
    if leftovers:  # the manager moved the chain aside (lefthook .old, pre-commit .legacy)
        name = leftovers.pop(0)
        _move(own, HOOK, hooks, name)
        return (f"the repository's earlier own hook is now {os.path.join(repo.git_hooks, name)}"
                ", where the manager that replaced it put the chain")
    with repo.at(INITD_DIR).open() as base:
        _move(own, HOOK, base, REPLACED)
    return (f"a manager wrote its hook over initd's chain: the repository's earlier own "
            f"hook is kept, not run, at {os.path.join(repo.common_dir, INITD_DIR, REPLACED)}")


def _link_siblings(hooks: agentfs.Dir, own: agentfs.Dir) -> None:
    """own/<name> → ../../hooks/<name> for every file beside the hook git runs."""
    want = {name for name, _ in hooks.names(ENTRIES)
            if name != HOOK and not name.startswith(".") and not name.endswith(".sample")}
    for name, link in own.names(ENTRIES):
        if link and name not in want and name != HOOK:  # (its own hook may be a link)
            own.remove(name)
    for name in sorted(want):
        own.symlink(f"../../hooks/{name}", name)


def uninstall_direct(repo: Repo) -> list[str]:
    said: list[str] = []
    try:
        hooks = repo.at("hooks").open()
    except FileNotFoundError:
        return said
    with hooks:
        leftovers = _leftovers(hooks)
        chained = hooks.mtime_ns(HOOK) is not None and managed(hooks, HOOK)
        if chained:
            hooks.remove(HOOK)
            said.append("removed initd's pre-commit chain")
        elif hooks.mtime_ns(HOOK) is not None:
            said.append(f"{repo.hook} is not initd's: left as it is")
        try:
            own = repo.at(INITD_DIR, OWN_DIR).open()
        except FileNotFoundError:
            own = None
        if own is not None:
            with own:
                said += _restore_own(repo, hooks, own, leftovers)
                _empty(own, keep=HOOK)
        if chained and hooks.mtime_ns(HOOK) is None:
            stub = managers.husky4_stub(hooks)
            if stub is not None:
                hooks.write(HOOK, stub, 0o755)
                said.append("restored husky 4's pre-commit stub, which husky kept out")
        for name in leftovers:
            hooks.remove(name)
            said.append(f"removed initd's chain that a manager had moved to {name}")
    return said


def _restore_own(repo: Repo, hooks: agentfs.Dir, own: agentfs.Dir,
                 leftovers: list[str]) -> list[str]:
    if own.mtime_ns(HOOK) is None:
        return []
    if hooks.mtime_ns(HOOK) is None:
        _move(own, HOOK, hooks, HOOK)
        return [f"restored {repo.hook}"]
    if _same(own, hooks, HOOK):
        own.remove(HOOK)
        return []
    if leftovers:
        name = leftovers.pop(0)
        _move(own, HOOK, hooks, name)
        return [f"restored the repository's own hook as {name}, where the manager that "
                "replaced it put initd's chain"]
    return [f"kept {os.path.join(repo.common_dir, INITD_DIR, OWN_DIR, HOOK)}: the "
            "repository's earlier own hook, which a manager wrote over"]


def _empty(directory: agentfs.Dir, keep: str = "") -> None:
    for name, _ in directory.names(ENTRIES):
        if name != keep:
            directory.remove(name)


# --- overlay: core.hooksPath ----------------------------------------------------------

def install_overlay(repo: Repo, make_chain: Callable[[str], str]) -> list[str]:
    """``make_chain(previous)``: the chain, running ``previous``/pre-commit first."""
    with repo.at(INITD_DIR).open(create=True) as base:
        state = _state(base) if repo.git_hooks == repo.overlay else None
        if repo.git_hooks != repo.overlay:
            raw = repo.hooks_path or ""
            # relative: from where git runs hooks (each work tree's top), as git reads it
            previous = raw if raw and not raw.startswith(("/", "~")) else repo.git_hooks
            state = {"local": repo.hooks_path_local, "hooks": previous}
            base.write(STATE, (json.dumps(state) + "\n").encode())
        elif state is None:
            raise InitdError(f"core.hooksPath names initd's {repo.overlay}, but what it "
                             f"named before is lost ({STATE} unreadable): set it back "
                             "(git config core.hooksPath DIR, or --unset), then install")
    previous = str(state["hooks"])
    with repo.at(INITD_DIR, OVERLAY_DIR).open(create=True) as overlay:
        for name in FORWARDED:
            overlay.write(name, forwarder(previous, name).encode(), 0o755)
        overlay.write(HOOK, make_chain(previous).encode(), 0o755)
    said = []
    if repo.git_hooks != repo.overlay:
        repo.config_set("core.hooksPath", repo.overlay)
        scope = "this repository's" if repo.hooks_path_local is not None else "a global"
        said.append(f"core.hooksPath was set ({scope}: {repo.hooks_path}): git now runs "
                    f"initd's {repo.overlay}, which runs that directory's hooks, the "
                    "pre-commit one first; uninstall puts core.hooksPath back")
    # a chain of an earlier install in .git/hooks, which git no longer reads: gone
    said += [line for line in uninstall_direct(repo) if line.startswith("restored")]
    return said


def _state(base: agentfs.Dir) -> dict[str, str | None] | None:
    try:
        data = base.read(STATE, 64 << 10)
        found = json.loads(data) if data is not None else None
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(found, dict) or not isinstance(found.get("hooks"), str) or not (
            found.get("local") is None or isinstance(found.get("local"), str)):
        return None
    return {"local": found["local"], "hooks": found["hooks"]}


def uninstall_overlay(repo: Repo) -> list[str]:
    try:
        base = repo.at(INITD_DIR).open()
    except FileNotFoundError:
        return []
    said = []
    with base:
        if repo.git_hooks == repo.overlay:
            state = _state(base)
            if state is None:
                raise InitdError(f"core.hooksPath names initd's {repo.overlay}, but what it "
                                 f"named before is lost ({STATE} unreadable): set it back "
                                 "yourself (git config core.hooksPath DIR, or --unset)")
            repo.config_set("core.hooksPath", state["local"])
            said.append("core.hooksPath put back" + (
                f" to {state['local']}" if state["local"] is not None else " (unset)"))
        try:
            with repo.at(INITD_DIR, OVERLAY_DIR).open() as overlay:
                _empty(overlay)
            base.rmdir(OVERLAY_DIR)
        except FileNotFoundError:
            pass
        base.remove(STATE)
    return said


def remove_own_dirs(repo: Repo) -> None:
    """.git/initd/own and .git/initd, when nothing is left in them."""
    try:
        with repo.at(INITD_DIR).open() as base:
            _rmdir(base, OWN_DIR)
        with repo.at().open() as git_dir:
            _rmdir(git_dir, INITD_DIR)
    except FileNotFoundError:
        pass


def _rmdir(directory: agentfs.Dir, name: str) -> None:
    try:
        directory.rmdir(name)
    except OSError as err:
        if err.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
