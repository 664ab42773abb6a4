"""Boot's steps for the workspace (ARCHITECTURE.md, "The boot sequence", steps 2-4): its
hooks and the image's, root's copies of the root hooks, the hooks' state, the session
hooks, the pre-commit chain. What only a workspace with hooks or a repository needs is
imported on demand: `initd -- cmd`, tini-style, starts CMD without them."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from initd.config import log, paths, settings
from initd.config.problems import ERROR
from initd.errors import InitdError
from initd.process import users
from initd.supervisor.sigchan import SignalChannel

if TYPE_CHECKING:
    from initd.devcontainer.lifecycle import Lifecycle
    from initd.hooks import precommit
    from initd.hooks.context import HookContext
    from initd.hooks.model import Hook
    from initd.hooks.phase import BackgroundHooks
    from initd.supervisor.roothooks import RootHooks


def root_copies(hooks: tuple[Hook, ...], account: users.Account | None) -> RootHooks | None:
    """Root's copies of every run_as: root hook, when root runs hooks for an agent that is
    not root: taken now, before any hook or the agent runs, and the only thing root
    executes from then on (invariant 8)."""
    if account is None or account.uid == 0 or os.geteuid() != 0:
        return None  # no privilege boundary to guard
    if not any(hook.run_as == "root" for hook in hooks):
        return None
    from initd.supervisor.roothooks import RootHooks

    return RootHooks(hooks)


def find_repo(config: settings.Settings, account: users.Account | None,
              signals: SignalChannel, logger: log.Logger) -> precommit.Repo | None:
    """The workspace's repository, as git run as the agent sees it (its config runs
    nothing as root); a broken one is a warning: the agent runs without the chain. Its
    git calls, and the chain's, stop at the stop signal (a FIFO the agent planted as
    its config holds git for its whole timeout): the caller then checks ``stop``."""
    if not os.path.lexists(os.path.join(config.workspace, ".git")):
        return None  # not a repository's top (as Repo.find says), without its import
    import subprocess

    from initd.hooks import precommit

    try:
        return precommit.Repo.find(config.workspace, account, cancel=signals.stop)
    except (InitdError, OSError, subprocess.SubprocessError) as err:
        logger.warning("pre-commit chain not installed", workspace=config.workspace,
                       error=str(err))
        return None


def discover_hooks(config: settings.Settings, logger: log.Logger) -> tuple[Hook, ...]:
    """Every hook of both directories; each file that is not one gets a line saying why."""
    if not any(os.path.lexists(d) for d in (config.hooks_dir,
                                            paths.workspace_hooks(config.workspace))):
        return ()  # (what discovery would find, without importing it)
    from initd.hooks import discovery

    with log.phase(logger, "discover hooks") as fields:
        found = discovery.for_workspace(config.workspace, config.hooks_dir)
        fields["hooks"] = len(found.hooks)
    for problem in found.problems:
        report = logger.warning if problem.severity == ERROR else logger.info
        report("hook file skipped", file=problem.path, reason=problem.reason)
    for hook in found.hooks:
        for warning in hook.warnings:
            logger.warning("hook front matter", file=hook.path, hook=hook.name, warning=warning)
    return found.hooks


def hook_context(config: settings.Settings, account: users.Account | None,
                 logger: log.Logger, agent_started: bool = False) -> HookContext:
    """Where hooks keep their state, for this session, made for the agent (said once
    when it cannot be written: a --read-only root). Before the agent starts, hooks a
    crash left "running" are recovered first, every one (nothing of initd's runs yet).
    Once it has (a workspace with no hook to run before it), root recovers nothing: a
    process of the agent's may hold status.json's lock, and root must not wait for it
    while it supervises; the hook service recovers at its start, as the agent, what a
    dead runner left (a hook the agent's own commit is running is left to finish)."""
    from initd.hooks import context, recovery  # status, json, threads: on demand

    ctx = context.make(config, account, logger, context.session_id(config.session_id, logger),
                       recover=None if agent_started else recovery.any_runner, prepare=True)
    if ctx.state_problem is not None:
        logger.warning(ctx.state_problem, state_dir=ctx.state.path)
    return ctx


def session_hooks(hooks: tuple[Hook, ...], ctx: HookContext | None, signals: SignalChannel,
                  logger: log.Logger) -> BackgroundHooks | None:
    """Run the session hooks; failures are logged and recorded, never fatal."""
    if ctx is None or not any(hook.type == "session" for hook in hooks):
        return None
    from initd.hooks import phase

    with log.phase(logger, "session hooks"):
        return phase.run_session_hooks(hooks, ctx, cancel=signals.stop)


def find_devcontainer(config: settings.Settings) -> str | None:
    """The workspace's devcontainer.json, when its lifecycle commands are to run: a
    workspace someone named (or one with hooks), as for the chain (`initd -- cmd` used
    tini-style in a checkout runs none of them), and not --no-devcontainer. A boot
    without one pays two lstats and imports nothing more; with one, the specification's
    places are looked at in order (devcontainer/file.py: its third, .devcontainer/<folder>/,
    too)."""
    if not config.devcontainer or not (config.workspace_given or os.path.isdir(
            paths.workspace_hooks(config.workspace))):
        return None
    if not any(os.path.lexists(os.path.join(config.workspace, name))
               for name in (".devcontainer", ".devcontainer.json")):
        return None
    from initd.devcontainer import file  # (os, stat and agentfs: no parser)

    found = file.find(config.workspace)
    return None if found is None else found.path or file.FOLDER


def devcontainer_phase(ctx: HookContext | None, logger: log.Logger) -> Lifecycle | None:
    """devcontainer.json, read and checked before any hook runs: its containerEnv is the
    session hooks' too. Every problem is a line; the agent starts whatever happens."""
    from initd.devcontainer import config as devcontainer
    from initd.devcontainer import lifecycle

    if ctx is None:
        return None
    try:
        config = devcontainer.load(ctx.workspace)
        return None if config is None else lifecycle.prepare(config, ctx)
    except Exception as err:  # a bug of ours on what the agent wrote: never fatal
        logger.error("devcontainer.json not run", workspace=ctx.workspace, error=repr(err))
        return None


def dev_container(phase: Lifecycle, signals: SignalChannel, logger: log.Logger) -> Lifecycle:
    """devcontainer.json's lifecycle commands: the stages up to waitFor now, the later
    ones started in the background (the returned owner stops them, and what they left
    running, at the end)."""
    with log.phase(logger, "devcontainer", wait_for=phase.config.wait_for):
        phase.run_waited(signals.stop)
    if not signals.stop.is_set():
        phase.start_background()
    return phase


def wants_precommit(config: settings.Settings) -> bool:
    """Only a workspace someone named, or one with hooks, gets the chain: `initd -- cmd`
    used tini-style inside some git checkout must not rewrite that checkout's hooks."""
    return config.precommit and (
        config.workspace_given or os.path.isdir(paths.workspace_hooks(config.workspace)))


def install_precommit(repo: precommit.Repo, account: users.Account | None,
                      hooks: tuple[Hook, ...], session: str, secrets: tuple[str, ...],
                      logger: log.Logger) -> None:
    """Install (or refresh) the managed chain; a refusal is a warning, never fatal.
    Written through agentfs (no link followed, the files the owner's), and the agent's
    safe.directory by git run as the agent: in its own ~/.gitconfig, with its rights."""
    import subprocess

    from initd.hooks import precommit

    try:
        with log.phase(logger, "pre-commit chain") as fields:
            fields["result"] = precommit.install(repo, hooks, session_id=session,
                                                 secrets=secrets)
            if account is not None and precommit.trust_for(repo, account):
                fields["safe_directory"] = repo.top
    except (InitdError, OSError, subprocess.SubprocessError) as err:
        logger.warning("pre-commit chain not installed", repo=repo.top, error=str(err))
