"""The managed git pre-commit chain: install, uninstall, and the script git runs.

Written where git really looks, beside what is already there (hookdirs: the repository's
own hook moved aside and run first under its own name, or a ``core.hooksPath`` overlaid
and chained), only inside the repository's git dir and through agentfs, from the
workspace down (no link followed, the files the repository owner's). The workspace is
the agent's (invariant 8): git runs as the agent. pre-commit's ``install`` is the bar:
initd's script is recognised by a marker; a hook that is not initd's is moved aside (a
rename: bytes, mode and owner stay) and run first; ``uninstall`` puts everything back.
Every path, id and name in the script is ``shlex.quote``d (invariant 4), and the
secrets initd hides are hidden from the hooks it runs, through initd or not.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

from initd.errors import InitdError
from initd.hooks import hookdirs, managers
from initd.hooks.gitrepo import HOOK, Repo
from initd.hooks.gitscripts import DIRECT_OWN, MARKER, chain, initd_command
from initd.hooks.model import Hook
from initd.process import git
from initd.process.users import Account
from initd.state import agentfs

__all__ = ["HOOK", "MARKER", "REFUSING", "Repo", "generate", "initd_command", "install",
           "is_managed", "trust_for", "uninstall"]

REFUSING = "refusing to install the pre-commit chain"
LATER = ("a core.hooksPath set later (here, or in ~/.gitconfig) sends git elsewhere, "
         "away from this chain, until initd installs again")
AGAIN = ("a core.hooksPath set again (git config core.hooksPath, as husky 9's install "
         "does) sends git away from this chain until initd installs again")


def is_managed(path: str) -> bool:
    try:
        head, _ = agentfs.read_regular(path, 4096)
    except OSError:
        return False
    return MARKER.encode() in head


def install(repo: Repo, hooks: Sequence[Hook], *, session_id: str,
            initd: str | None = None, secrets: Sequence[str] = ()) -> str:
    """Install (or refresh) the managed script for the ``type: pre-commit`` hooks among
    ``hooks``, calling back ``initd`` (default: the one running now). Returns what was
    done, one line for each thing, for the log; raises InitdError saying why it will not."""
    hooks = [hook for hook in hooks if hook.type == "pre-commit"]

    def script(own: str) -> str:
        return chain(repo, hooks, own=own, session_id=session_id,
                     initd=initd or initd_command(), secrets=secrets)

    try:
        if repo.overlaid:
            said = hookdirs.install_overlay(repo, lambda previous: script(
                shlex.quote(previous)))
            where, later = os.path.join(repo.overlay, HOOK), AGAIN
        else:
            said = hookdirs.install_direct(repo, script(DIRECT_OWN))
            hookdirs.uninstall_overlay(repo)  # an overlay core.hooksPath no longer names
            where, later = repo.hook, LATER
    except agentfs.Unsafe as err:
        raise InitdError(f"{REFUSING}: {err}") from None
    notes = managers.notes(repo.work_tree())
    return "\n".join([f"installed {where} ({len(hooks)} hook(s))", *said, *notes, later])


def uninstall(repo: Repo) -> str:
    """Remove initd's scripts and put back what they replaced, byte for byte."""
    try:
        said = hookdirs.uninstall_overlay(repo) + hookdirs.uninstall_direct(repo)
        hookdirs.remove_own_dirs(repo)
    except agentfs.Unsafe as err:
        raise InitdError(f"refusing to uninstall the pre-commit chain: {err}") from None
    return "\n".join(said) or "nothing to uninstall"


def generate(repo: Repo, hooks: Sequence[Hook], *, session_id: str, initd: str,
             secrets: Sequence[str] = ()) -> str:
    """The chain as installed in .git/hooks (the repository's own hook in .git/initd/own)."""
    return chain(repo, hooks, own=DIRECT_OWN, session_id=session_id, initd=initd,
                 secrets=secrets)


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


