"""The managed git pre-commit chain: install, uninstall, and the script git runs.

Written where git really looks (``git rev-parse --git-path hooks``: ``core.hooksPath``,
linked worktrees and the common dir are all honoured). pre-commit's ``install`` is the
bar: initd's script is recognised by a marker; a hook that is not initd's is moved to
``pre-commit.original`` (a rename: bytes, mode and owner stay) and run first; an
existing backup is never overwritten; ``uninstall`` renames it back. Every path, id and
name in the script is ``shlex.quote``d (invariant 4).
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
from collections.abc import Sequence

from initd.errors import InitdError
from initd.hooks import changes
from initd.hooks.model import Hook

MARKER = "discobot:managed"
HOOK = "pre-commit"
BACKUP = "pre-commit.original"


class Repo:
    """A git repository as initd's own git calls see it."""

    def __init__(self, workspace: str) -> None:
        self.workspace = os.path.abspath(workspace)
        self.top = self.git("rev-parse", "--show-toplevel")
        self.hooks_dir = os.path.join(self.workspace, self.git("rev-parse", "--git-path",
                                                               "hooks"))
        common = os.path.join(self.workspace, self.git("rev-parse", "--git-common-dir"))
        info = os.stat(common)
        self.owner = (info.st_uid, info.st_gid)  # who the script and backups belong to

    @classmethod
    def find(cls, workspace: str) -> Repo | None:
        """The repository at ``workspace``, or None when it is not one."""
        if not os.path.lexists(os.path.join(workspace, ".git")):
            return None  # not a repository's top (.git: a directory, or a worktree's file)
        try:
            return cls(workspace)
        except InitdError:
            return None

    def git(self, *args: str) -> str:
        try:
            out = changes.git(self.workspace, *args)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise InitdError(f"git {' '.join(args)}: {err}") from None
        if out.returncode != 0:
            error = out.stderr.decode(errors="replace").strip()
            raise InitdError(f"{self.workspace}: not a git repository "
                             f"({error or 'git ' + args[0] + ' failed'})")
        return os.fsdecode(out.stdout).strip()

    @property
    def hook(self) -> str:
        return os.path.join(self.hooks_dir, HOOK)

    @property
    def backup(self) -> str:
        return os.path.join(self.hooks_dir, BACKUP)


def is_managed(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return MARKER.encode() in f.read(4096)
    except OSError:
        return False


def install(repo: Repo, hooks: Sequence[Hook], *, session_id: str,
            initd: str | None = None) -> str:
    """Install (or refresh) the managed script for the ``type: pre-commit`` hooks among
    ``hooks``, calling back ``initd`` (default: the one running now). Returns what was
    done, for the log."""
    hooks = [hook for hook in hooks if hook.type == "pre-commit"]
    initd = initd or initd_command()
    if not os.path.isdir(repo.hooks_dir):  # a core.hooksPath may not exist yet
        os.makedirs(repo.hooks_dir)
        if os.geteuid() == 0:
            os.chown(repo.hooks_dir, *repo.owner)
    moved = ""
    if os.path.lexists(repo.hook) and not is_managed(repo.hook):
        if os.path.lexists(repo.backup):
            raise InitdError(
                f"refusing to install the pre-commit chain: {repo.hook} is not initd's and "
                f"{repo.backup} already exists, and initd never overwrites a backup. Keep "
                f"the one you need as {BACKUP} (merge them if both matter), remove the "
                "other, then run: initd precommit install")
        os.rename(repo.hook, repo.backup)  # bytes, mode and owner stay as they were
        moved = f"; the repository's own hook moved to {repo.backup} and runs first"
    script = generate(repo, hooks, session_id=session_id, initd=initd)
    tmp = f"{repo.hook}.initd-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(script)
    os.chmod(tmp, 0o755)
    if os.geteuid() == 0:
        os.chown(tmp, *repo.owner)
    os.replace(tmp, repo.hook)
    return f"installed {repo.hook} ({len(hooks)} hook(s)){moved}"


def uninstall(repo: Repo) -> str:
    """Remove initd's script and put the repository's own hook back, byte for byte."""
    removed = False
    if os.path.lexists(repo.hook):
        if not is_managed(repo.hook):
            return f"{repo.hook} is not initd's: left as it is"
        os.unlink(repo.hook)
        removed = True
    if os.path.lexists(repo.backup):
        os.rename(repo.backup, repo.hook)
        return f"removed initd's pre-commit chain; restored {repo.hook} from {BACKUP}"
    return "removed initd's pre-commit chain" if removed else "nothing to uninstall"


def trust_for(repo: Repo, home: str, owner: tuple[int, int]) -> bool:
    """Let the agent user commit in a repository someone else owns: add this one path to
    ``safe.directory`` in the agent's own ~/.gitconfig (never ``*``, never system-wide).
    Returns True when an entry was added."""
    if owner[0] == repo.owner[0]:
        return False  # the agent owns it: git has nothing to object to
    config = os.path.join(home, ".gitconfig")
    env = changes.git_env()
    listed = subprocess.run(["git", "config", "--file", config, "--get-all", "safe.directory"],
                            env=env, capture_output=True, text=True)
    if repo.top in listed.stdout.splitlines():
        return False
    try:
        mode = stat.S_IMODE(os.stat(config).st_mode)
    except FileNotFoundError:
        mode = None
    subprocess.run(["git", "config", "--file", config, "--add", "safe.directory", repo.top],
                   env=env, check=True, capture_output=True)
    # git wrote a new file (a lock file renamed over the old one): as root, that made it
    # root's, and the agent could no longer change its own config. Give it back, as it was.
    if os.geteuid() == 0:
        os.chown(config, *owner)
    if mode is not None:
        os.chmod(config, mode)
    return True


def generate(repo: Repo, hooks: Sequence[Hook], *, session_id: str, initd: str) -> str:
    """The script git runs: readable, deterministic (reinstalling rewrites the same bytes)."""
    q = shlex.quote
    listed = "\n".join(f"#   {_comment(h.id)}: {_comment(h.name)} ({_comment(h.path)})"
                       for h in hooks) or "#   (none yet: add type: pre-commit hooks, and boot"
    if not hooks:
        listed += " or `initd precommit install` lists them here)"
    calls = "\n".join(f"run_hook {q(h.id)} {q(h.name)} {q(h.path)} || exit $?" for h in hooks)
    return f"""#!/bin/sh
# {MARKER}
# Generated by initd (initd precommit install). DO NOT EDIT: initd rewrites this file
# when the hooks change, and `initd precommit uninstall` puts the original hook back.
# Hooks directory: {_comment(os.path.join(repo.workspace, ".discobot", "hooks"))}
# Runs, in order, stopping at the first failure:
#   the repository's own hook, {BACKUP}, when there is one
{listed}
workspace={q(repo.workspace)}
session={q(session_id)}
initd={q(initd)}

here=$(dirname -- "$0")
if [ -x "$here/{BACKUP}" ]; then
    "$here/{BACKUP}" "$@" || exit $?
fi

run_hook() {{  # id name path
    if [ -x "$initd" ]; then
        # status.json and output/<id>.log, with initd's locked, atomic writes
        "$initd" precommit run --workspace "$workspace" --session-id "$session" -- "$1" \\
            </dev/null
        return
    fi
    # initd is out of reach from here: run the hook itself, so the commit still works
    out=$(DISCOBOT_HOOK_TYPE=pre-commit DISCOBOT_SESSION_ID="$session" \\
        DISCOBOT_WORKSPACE="$workspace" "$3" </dev/null 2>&1)
    code=$?
    if [ "$code" -ne 0 ]; then
        printf '%s\\n' "$out" >&2
        printf 'pre-commit hook %s failed with exit code %s\\n' "$2" "$code" >&2
    fi
    return "$code"
}}

{calls}
exit 0
"""


def _comment(text: str) -> str:
    """Safe inside a shell comment: no newline (or other control) can end the comment."""
    return "".join(c if c.isprintable() else "?" for c in text)


def initd_command() -> str:
    """The initd executable that the script calls back: the one running now."""
    here = os.path.join(os.path.dirname(sys.executable), "initd")
    return here if os.access(here, os.X_OK) else os.path.abspath(sys.argv[0])
