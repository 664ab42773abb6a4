"""The managed git pre-commit chain: install, uninstall, and the script git runs.

Written where git really looks (``git rev-parse --git-path hooks``: linked worktrees and
the common dir are honoured), but only inside the repository's real git dir: a hooks
directory outside it (``core.hooksPath`` at the image's hooks, at ``/etc``, or at the
worktree's ``.githooks``) or reached through a link is refused with one line that says
so. The workspace is the agent's (invariant 8): git runs as the agent, and the files are
written through agentfs, from the workspace down (no link followed, the script and the
backup the repository owner's). pre-commit's ``install`` is the bar: initd's script is
recognised by a marker; a hook that is not initd's is moved to ``pre-commit.original``
(a rename: bytes, mode and owner stay) and run first; an existing backup is never
overwritten; ``uninstall`` renames it back. Every path, id and name in the script is
``shlex.quote``d (invariant 4), and the secrets initd hides are hidden from the hooks it
runs, through initd or not.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Sequence

from initd import agentfs, git
from initd.errors import InitdError
from initd.hooks.model import Hook
from initd.users import Account

MARKER = "discobot:managed"
HOOK = "pre-commit"
BACKUP = "pre-commit.original"
REFUSING = "refusing to install the pre-commit chain"


class Repo:
    """A git repository as initd's own git calls see it: as ``account`` when root acts
    for the agent, so the repository's configuration runs nothing as root; ``cancel``
    (boot's stop signal) stops each of them at once (git.run)."""

    def __init__(self, workspace: str, account: Account | None = None,
                 cancel: threading.Event | None = None) -> None:
        self.workspace = os.path.abspath(workspace)
        self.account = account
        self.cancel = cancel
        self.top = self.git("rev-parse", "--show-toplevel")
        self.git_hooks = os.path.normpath(os.path.join(
            self.workspace, self.git("rev-parse", "--git-path", "hooks")))
        self.common_dir = os.path.normpath(os.path.join(
            self.workspace, self.git("rev-parse", "--git-common-dir")))
        info = os.stat(self.common_dir)
        self.owner = (info.st_uid, info.st_gid)  # who the script and backups belong to

    @classmethod
    def find(cls, workspace: str, account: Account | None = None,
             cancel: threading.Event | None = None) -> Repo | None:
        """The repository at ``workspace``, or None (not one, or the look cancelled)."""
        if not os.path.lexists(os.path.join(workspace, ".git")):
            return None  # not a repository's top (.git: a directory, or a worktree's file)
        try:
            return cls(workspace, account, cancel)
        except InitdError:
            return None

    def git(self, *args: str) -> str:
        try:
            out = git.git(self.workspace, *args, account=self.account, timeout=30,
                          cancel=self.cancel)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise InitdError(f"git {' '.join(args)}: {err}") from None
        if out.cancelled:
            raise InitdError(f"git {' '.join(args)}: stopped: initd is stopping")
        if out.returncode != 0:
            error = out.stderr.decode(errors="replace").strip()
            raise InitdError(f"{self.workspace}: not a git repository "
                             f"({error or 'git ' + args[0] + ' failed'})")
        return os.fsdecode(out.stdout).strip()

    @property
    def hook(self) -> str:
        return os.path.join(self.git_hooks, HOOK)

    @property
    def backup(self) -> str:
        return os.path.join(self.git_hooks, BACKUP)

    def place(self) -> agentfs.Place:
        """Where the chain goes, as agentfs walks to it; InitdError saying why when it may
        not go there: a hooks directory outside the git dir, or a git dir that a ``.git``
        file or link points at and that is not the agent's."""
        inside = os.path.relpath(self.git_hooks, self.common_dir)
        if inside == ".." or inside.startswith("../"):
            raise InitdError(f"{REFUSING}: git's hooks directory {self.git_hooks} "
                             "(core.hooksPath) is outside the repository's git dir "
                             f"{self.common_dir}, and initd writes only inside it (hint: "
                             "git config --unset-all core.hooksPath)")
        parts = tuple(p for p in inside.split("/") if p not in ("", "."))
        if self.common_dir == os.path.join(self.workspace, ".git"):
            # The workspace's own repository: walked from the workspace, .git included.
            return agentfs.Place(self.workspace, (".git", *parts), owner=self.owner)
        # A .git file (a linked worktree) names a git dir elsewhere: one of the agent's.
        agent = self.account.uid if self.account is not None else None
        return agentfs.Place(self.common_dir, parts, owner=self.owner, base_uid=agent)


def is_managed(path: str) -> bool:
    try:
        head, _ = agentfs.read_regular(path, 4096)
    except OSError:
        return False
    return MARKER.encode() in head


def _managed(directory: agentfs.Dir) -> bool:
    try:
        head = directory.read(HOOK, 4096, anyone=True, whole=False)
    except agentfs.Unsafe:
        return False  # a link or a FIFO: not a file initd wrote
    return head is not None and MARKER.encode() in head


def install(repo: Repo, hooks: Sequence[Hook], *, session_id: str,
            initd: str | None = None, secrets: Sequence[str] = ()) -> str:
    """Install (or refresh) the managed script for the ``type: pre-commit`` hooks among
    ``hooks``, calling back ``initd`` (default: the one running now). Returns what was
    done, for the log; raises InitdError saying why it will not."""
    hooks = [hook for hook in hooks if hook.type == "pre-commit"]
    script = generate(repo, hooks, session_id=session_id, initd=initd or initd_command(),
                      secrets=secrets)
    moved = ""
    try:
        with repo.place().open(create=True) as directory:  # a missing hooks dir is made
            if directory.mtime_ns(HOOK) is not None and not _managed(directory):
                if directory.mtime_ns(BACKUP) is not None:
                    raise InitdError(
                        f"{REFUSING}: {repo.hook} is not initd's and {repo.backup} already "
                        "exists, and initd never overwrites a backup. Keep the one you need "
                        f"as {BACKUP} (merge them if both matter), remove the other, then "
                        "run: initd precommit install")
                directory.rename(HOOK, BACKUP)  # bytes, mode and owner stay as they were
                moved = f"; the repository's own hook moved to {repo.backup} and runs first"
            directory.write(HOOK, script.encode(), 0o755)
    except agentfs.Unsafe as err:
        raise InitdError(f"{REFUSING}: {err}") from None
    return f"installed {repo.hook} ({len(hooks)} hook(s)){moved}"


def uninstall(repo: Repo) -> str:
    """Remove initd's script and put the repository's own hook back, byte for byte."""
    try:
        with repo.place().open() as directory:
            removed = False
            if directory.mtime_ns(HOOK) is not None:
                if not _managed(directory):
                    return f"{repo.hook} is not initd's: left as it is"
                directory.remove(HOOK)
                removed = True
            if directory.mtime_ns(BACKUP) is not None:
                directory.rename(BACKUP, HOOK)
                return f"removed initd's pre-commit chain; restored {repo.hook} from {BACKUP}"
    except FileNotFoundError:
        return "nothing to uninstall"
    except agentfs.Unsafe as err:
        raise InitdError(f"refusing to uninstall the pre-commit chain: {err}") from None
    return "removed initd's pre-commit chain" if removed else "nothing to uninstall"


def trust_for(repo: Repo, agent: Account) -> bool:
    """Let the agent user commit in a repository someone else owns: add this one path to
    ``safe.directory`` in the agent's own ~/.gitconfig (never ``*``, never system-wide),
    with git run as the agent: whatever that file is (a link to a root file included),
    it is written with the agent's rights. Returns True when an entry was added."""
    if agent.uid == repo.owner[0]:
        return False  # the agent owns it: git has nothing to object to
    listed = _agent_config(repo, agent, "--get-all", "safe.directory")
    if repo.top in os.fsdecode(listed.stdout).splitlines():
        return False
    _agent_config(repo, agent, "--add", "safe.directory", repo.top).check_returncode()
    return True


def _agent_config(repo: Repo, agent: Account, *args: str) -> git.Ran:
    """``git config`` on the agent's own ~/.gitconfig, as the agent; stopped by the
    repository's ``cancel`` (InitdError)."""
    done = git.run(["config", "--file", os.path.join(agent.home, ".gitconfig"), *args],
                   agent, timeout=30, cancel=repo.cancel)
    if done.cancelled:
        raise InitdError("safe.directory not added: initd is stopping")
    return done


def generate(repo: Repo, hooks: Sequence[Hook], *, session_id: str, initd: str,
             secrets: Sequence[str] = ()) -> str:
    """The script git runs: readable, deterministic (reinstalling rewrites the same bytes).
    The secrets initd was told of are named in it, so that no hook it runs sees them."""
    q = shlex.quote
    hidden = ["DISCOBOT_SECRET", *(name for name in secrets if name != "DISCOBOT_SECRET")]
    secret_args = "".join(f" --secret {q(name)}" for name in hidden)
    unset = " ".join(f"-u {q(name)}" for name in hidden)
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
        "$initd" precommit run --workspace "$workspace" --session-id "$session"{secret_args} \\
            -- "$1" </dev/null
        return
    fi
    # initd is out of reach from here: run the hook itself, so the commit still works
    # (without the secrets: env -u, as initd would)
    out=$(env {unset} DISCOBOT_HOOK_TYPE=pre-commit DISCOBOT_SESSION_ID="$session" \\
        DISCOBOT_WORKSPACE="$workspace" PYTHONSAFEPATH=1 "$3" </dev/null 2>&1)
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
