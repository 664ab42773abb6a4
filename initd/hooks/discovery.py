"""Find the hooks: every file of the hook directories becomes a Hook or a Problem.

Directories are read in order (the image's ``/etc/initd/hooks.d`` before the
workspace's ``.discobot/hooks``), files in file-name order. A missing directory is fine.
A file that is plainly not a hook (no shebang, no front matter, not a regular file) is
a *note*; one that means to be a hook but is broken is an *error*. Either way: one line
that says which file and why, and the other hooks go on; ``initd hooks check`` fails on
both (a file of a hooks directory that will not run is a guard that silently never
would). In the workspace's directory a symbolic link is resolved by initd
(workspacefiles.read_hook): one naming a hook file of the workspace is that hook, known
by the link's name, run as the file it names; any other is an error.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import NamedTuple

from initd.config import paths
from initd.config.problems import ERROR, NOTE, LoadError, Problem
from initd.errors import shown
from initd.hooks import frontmatter, model, workspacefiles
from initd.hooks.model import Hook
from initd.state import agentfs

HEAD_LIMIT = frontmatter.HEAD_LIMIT  # of each file: the front matter must close within it
# of a directory's names, in order, read as hooks (the rest are not), of at most SCAN_LIMIT
# listed (a directory the agent filled: bounded)
MAX_ENTRIES, SCAN_LIMIT = workspacefiles.MAX_NAMES, workspacefiles.SCAN_LIMIT
ROOT_COPY_LIMIT = 2**20  # bytes of a root hook root copies at boot (supervisor/roothooks.py)


class Broken(NamedTuple):
    """A file that means to be a hook (or could not be read to know) and is broken: its
    ERROR problem, and its front matter's ``type`` as written (None when it has none, or
    the front matter did not parse). The events engine makes one that may be an event
    hook a stand-in on its event (invariant 12: a guard is never simply not there)."""

    problem: Problem
    type: object = None
    read: bool = True  # False: the file could not be read at all


class Found(NamedTuple):
    hooks: tuple[Hook, ...]
    problems: tuple[Problem, ...]
    # directories not read whole (over MAX_ENTRIES names): their problems, also in
    # ``problems``. A guard among the names not read did not run: the callers say so
    # in every answer, and a blockable event is blocked (invariant 12: fail closed).
    unread: tuple[Problem, ...] = ()
    broken: tuple[Broken, ...] = ()  # every ERROR problem of a file, also in ``problems``

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == ERROR)


def for_workspace(workspace: str, image_dir: str) -> Found:
    """The image's hooks, then the workspace's: the order they run in."""
    return discover([image_dir, paths.workspace_hooks(workspace)], workspace)


def discover(directories: Sequence[str], workspace: str | None = None) -> Found:
    """Every file of ``directories``; in ``workspace``'s hooks directory, a link is a
    hook only as workspacefiles.read_hook resolves it (elsewhere, the image's: followed)."""
    hooks: list[Hook] = []
    problems: list[Problem] = []
    unread: list[Problem] = []
    broken: list[Broken] = []
    by_id: dict[str, str] = {}
    for directory in directories:
        try:
            names, more = listing(directory)
        except FileNotFoundError:
            continue
        except OSError as err:
            # (not "unread": an image's hooks directory only root may list holds
            # root's session hooks, which the agent's service has no business seeing)
            problems.append(Problem(directory, None, f"cannot list the directory: {err.strerror}",
                                    ERROR))
            continue
        if more:
            unread.append(_overflow(directory, names, more))
            problems.append(unread[-1])
        for name in names:
            path = os.path.join(directory, name)
            if name.startswith("."):  # .gitkeep, editor swap files: never run
                problems.append(Problem(path, None, "hidden file: never a hook", NOTE))
                continue
            within = workspace if workspace is not None and \
                directory == paths.workspace_hooks(workspace) else None
            found, kind = _load(path, directory, within)
            if isinstance(found, Problem):
                problems.append(found)
                if found.severity == ERROR:
                    broken.append(kind._replace(problem=found))
            elif found.id in by_id:
                problems.append(Problem(found.path, None, f"hook id {shown(found.id)} is already "
                                        f"used by {by_id[found.id]}; rename one of them",
                                        ERROR))
                broken.append(Broken(problems[-1], found.type))
            else:
                by_id[found.id] = found.path
                hooks.append(found)
    return Found(tuple(hooks), tuple(problems), tuple(unread), tuple(broken))


def load(path: str, directory: str, within: str | None = None) -> Hook | Problem:
    """One file: a Hook, or the Problem that says why it is not one. A FIFO or device is
    never opened for real (non-blocking, then fstat: no swap between a look and the
    read), and no more than the head is read, whatever the file's size. A link is
    followed, except in a hooks directory ``within`` a workspace (read_hook's rules)."""
    return _load(path, directory, within)[0]


def _load(path: str, directory: str, within: str | None = None
          ) -> tuple[Hook | Problem, Broken]:
    """load's, and what its problem is (a Broken, whose ``problem`` the caller sets)."""
    nothing = Problem(path, None, "", ERROR)
    runs = path
    try:
        if within is None:
            head, info = workspacefiles.read(path, HEAD_LIMIT)  # (a verb's guard: no link)
        else:
            head, info, runs = workspacefiles.read_hook(path, HEAD_LIMIT, within)
    except workspacefiles.Linked as err:  # (what a guard would have been: it stands in)
        return Problem(path, None, err.why, ERROR), Broken(nothing, read=False)
    except workspacefiles.Refused as err:
        return Problem(path, None, err.why, NOTE), Broken(nothing)
    except agentfs.Unsafe as err:
        return Problem(path, None, _unsafe(path, err), NOTE), Broken(nothing)
    except OSError as err:  # ELOOP for a symlink loop, ENOENT for a dangling link
        return Problem(path, None, f"cannot read: {err.strerror}", ERROR), Broken(nothing,
                                                                             read=False)
    return _parse(path, directory, head, info, runs)


def _unsafe(path: str, err: agentfs.Unsafe) -> str:
    text = str(err).removeprefix(f"{path}: ")
    return text if text.startswith("a symbolic link") else "not a regular file"


def parse(path: str, directory: str, head: bytes, info: os.stat_result) -> Hook | Problem:
    """A hook file's first bytes (and its status) as a Hook, or why they are not one."""
    return _parse(path, directory, head, info)[0]


def _parse(path: str, directory: str, head: bytes, info: os.stat_result,
           runs: str | None = None) -> tuple[Hook | Problem, Broken]:
    """parse's, and the file's ``type`` as written, as a Broken (None: none was read).
    ``runs``: the file that runs, when ``path`` is a link to it."""
    nothing = Broken(Problem(path, None, "", ERROR))
    if not stat.S_ISREG(info.st_mode):
        return Problem(path, None, "not a regular file", NOTE), nothing
    text = head.decode("utf-8", errors="replace")  # binary garbage simply has no front matter
    try:
        fields = frontmatter.parse(text)
    except frontmatter.FrontMatterError as err:
        message = str(err)
        if len(head) == HEAD_LIMIT and "never closed" in message:
            message += " (only a file's first 64 KiB are read for it)"
        return Problem(path, None, f"front matter: {message}", ERROR), nothing
    if fields is None:
        return Problem(path, None, "no front matter (---, #--- or //--- on line 1 or 2): "
                       "not a hook", NOTE), nothing
    label, kind = _label(fields), nothing._replace(type=fields.get("type"))
    if not text.startswith("#!"):
        return Problem(path, None, f"{label}no shebang on line 1 (e.g. #!/bin/sh), so it "
                       "cannot be executed", ERROR), kind
    if not info.st_mode & 0o111:
        return Problem(path, None, f"{label}not executable (chmod +x {path})", ERROR), kind
    try:
        hook = model.validate(fields, runs or path, directory, os.path.basename(path))
    except LoadError as err:  # a field (model.HookError too)
        return Problem(path, None, f"{label}{err}", ERROR), kind
    why = _will_not_run(hook, info, path)
    return (hook, kind) if why is None else (Problem(path, None, f"{label}{why}", ERROR), kind)


def _will_not_run(hook: Hook, info: os.stat_result, path: str) -> str | None:
    """Why a valid hook would still not run: root's copy of a root hook is a regular file
    of the hooks directory of at most ROOT_COPY_LIMIT bytes (supervisor/roothooks.py);
    any other runs as the agent (``running_as``), who must be able to read and execute it."""
    if hook.run_as == "root":
        if hook.path != path:
            return (f"run_as: root, and a symbolic link to {hook.path}: root runs only a "
                    "file of the hooks directory itself, copied at boot (copy it here)")
        if info.st_size > ROOT_COPY_LIMIT:
            return (f"run_as: root, and {info.st_size} bytes: root copies a root hook at "
                    f"boot, up to {ROOT_COPY_LIMIT} bytes (make it a smaller script that "
                    "runs the rest)")
        return None
    uid, groups = _runner[-1] if _runner else (os.geteuid(), {os.getegid(), *os.getgroups()})
    if uid == 0:
        return None
    shift = 6 if info.st_uid == uid else 3 if info.st_gid in groups else 0
    if (info.st_mode >> shift) & 0o5 == 0o5:
        return None
    return (f"uid {uid}, who runs it, may not read and execute it (mode "
            f"{stat.S_IMODE(info.st_mode):o}, owner uid {info.st_uid}: chmod or chown it)")


_runner: list[tuple[int, set[int]]] = []  # who runs the hooks that are not root's


@contextmanager
def running_as(uid: int, groups: Sequence[int]) -> Iterator[None]:
    """Within: a hook not run as root is judged as ``uid`` (and ``groups``) would run it,
    not as this process (root's ``initd hooks check`` for the agent's hooks)."""
    _runner.append((uid, set(groups)))
    try:
        yield
    finally:
        _runner.pop()


def _label(fields: dict[str, object]) -> str:
    name = fields.get("name")
    return f"hook {shown(name)}: " if isinstance(name, str) else ""


def listing(directory: str) -> tuple[list[str], int]:
    """The first MAX_ENTRIES names of ``directory`` in name order, and how many more
    there are (0: none), of at most SCAN_LIMIT listed (workspacefiles.names). The agent
    may fill its workspace's hooks directory, and root reads it at boot: memory is
    bounded by MAX_ENTRIES, time by SCAN_LIMIT."""
    return workspacefiles.names(directory, MAX_ENTRIES, SCAN_LIMIT)


def _overflow(directory: str, names: list[str], more: int) -> Problem:
    many = f"{MAX_ENTRIES + more}" + (" or more" if MAX_ENTRIES + more >= SCAN_LIMIT else "")
    return Problem(directory, None, f"holds {many} entries: only the first {MAX_ENTRIES} in name "
                   f"order are read as hooks (up to {shown(names[-1], 60)}); a hook among "
                   "the rest does not run (hooks are a few files: is this the right "
                   "directory?)", ERROR)
