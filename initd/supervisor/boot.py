"""The supervisor: the boot sequence of DESIGN.md §2, then supervision until the end.

Runs in the process PID 1 forked (pid1.run), as an ordinary process: it waits only for
its own children, through their pidfds.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from initd import __version__, agentfs, log, paths, pid1, proc, settings, users
from initd.errors import InitdError, shown
from initd.supervisor.backoff import Backoff
from initd.supervisor.sigchan import SignalChannel
from initd.supervisor.supervised import Supervised

# What only a workspace with hooks or a repository needs is imported on demand:
# `initd -- cmd`, tini-style, starts CMD without them (~4 ms of every such boot).
if TYPE_CHECKING:
    from initd.hooks import precommit
    from initd.hooks.context import HookContext
    from initd.hooks.model import Hook
    from initd.hooks.phase import BackgroundHooks
    from initd.supervisor.health import Probes
    from initd.supervisor.hookservice import ServiceChild
    from initd.supervisor.roothooks import RootHooks



def boot(flags: argparse.Namespace) -> int:
    """The supervisor's whole life, step by step. Returns the container's exit code."""
    signals = SignalChannel(pid1.FORWARDED, {signal.SIGTERM})  # 0. the signals PID 1 kept
    started = time.monotonic()
    config = settings.load(flags, os.environ)  # 1. settings and env files
    signals.use_stop_signal(config.stop_signal)
    log.configure(config.verbose, config.log_format)
    logger = log.get(logger="supervisor")
    logger.info("settings", duration_ms=round((time.monotonic() - started) * 1000, 1),
                config_file=config.config, user=config.user, restart=str(config.restart))
    for warning in config.warnings:
        logger.warning(warning)
    account = agent_account(config, logger)
    probes = start_probes(config)  # /healthz answers from now on, during the hooks too
    hooks = discover_hooks(config, logger)  # 2. the image's and the workspace's hooks
    roots = root_copies(hooks, account)  # 2b. root's copies, before anything runs
    repo = find_repo(config, account, logger) if wants_precommit(config) else None
    serve = wants_service(config)
    ctx = None
    if repo is not None or serve or any(hook.type == "session" for hook in hooks):
        ctx = hook_context(config, account, logger)._replace(
            snapshots=roots, git_as=account if roots is not None else None)
    try:
        background = session_hooks(hooks, ctx, signals, logger)  # 3. session hooks
        if signals.stop.is_set():  # stopped during the session hooks: never start the agent
            logger.info("stopped before the agent started", signal=signals.stop_signal)
            return config.remapped(128 + signals.stop_signal)  # (no background hook begun)
        if repo is not None and ctx is not None:  # 4. the git chain
            install_precommit(repo, account, hooks, ctx.session_id, config.secret, logger)
        for path in agentfs.refused_chowns():  # (said once: --cap-drop CHOWN)
            logger.warning("cannot give what root made for the agent to the agent (no "
                           "CAP_CHOWN?): its hook service may not write its state there",
                           path=path)
        service = None
        if serve and ctx is not None:  # 5a. the hook service, started beside the agent
            service = start_service(config, account, ctx, roots, repo, signals, logger)
        return run_agent(config, account, service, background, signals, logger, probes)
    finally:
        if roots is not None:
            roots.close()
        if probes is not None:
            probes.close()


def run_agent(config: settings.Settings, account: users.Account | None,
              service: ServiceChild | None, background: BackgroundHooks | None,
              signals: SignalChannel, logger: log.Logger, probes: Probes | None = None
              ) -> int:
    """5b-7: the agent, supervised until it ends or initd is told to stop."""
    agent = Supervised(  # 5b. the agent
        "agent",
        proc.Spec(argv=config.command, env=agent_environment(config, account, service),
                  cwd=os.getcwd(), account=account, stdin=proc.INHERIT, terminal=True),
        restart=config.restart,
        backoff=Backoff(max_restarts=config.max_restarts, window=config.restart_window),
        grace=config.grace,
        log=logger,
        **agent_readiness(config),
    )
    try:
        if signals.stop.is_set():  # stopped while the service started
            return config.remapped(128 + signals.stop_signal)
        with log.phase(logger, "agent start"):
            agent.start()
        code = supervise(agent, signals, logger, service, probes)  # 6-7. until the end
    finally:
        tell(describe(agent, service, "stopping"), service, probes)
        if service is not None:
            service.stop(signal.SIGTERM)  # the agent first, then its hook service
            service.close()
        if background is not None:
            background.stop()  # blocking: false session hooks still running go with us
    return config.remapped(code)


def agent_account(config: settings.Settings, logger: log.Logger) -> users.Account | None:
    """The agent user from --user, or None: the agent runs as whoever started initd
    (not root: always, said once when --user names someone else)."""
    account = users.agent(config.user)
    if config.user is not None and account is None:
        me = os.geteuid()
        logger.warning(f"not root (uid {me}): the agent, its hooks and the hook service "
                       f"run as uid {me}, not as user {shown(config.user)} (switching "
                       "users needs root; `podman run --user` decides who runs)",
                       user=config.user)
    return account


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
              logger: log.Logger) -> precommit.Repo | None:
    """The workspace's repository, as git run as the agent sees it (its config runs
    nothing as root); a broken one is a warning: the agent runs without the chain."""
    from initd.hooks import precommit

    try:
        return precommit.Repo.find(config.workspace, account)
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
        report = logger.warning if problem.severity == discovery.ERROR else logger.info
        report("hook file skipped", file=problem.path, reason=problem.reason)
    for hook in found.hooks:
        for warning in hook.warnings:
            logger.warning("hook front matter", file=hook.path, hook=hook.name, warning=warning)
    return found.hooks


def hook_context(config: settings.Settings, account: users.Account | None,
                 logger: log.Logger) -> HookContext:
    """Where hooks keep their state, for this session, made for the agent (said once
    when it cannot be written: a --read-only root); hooks a crash left "running" are
    recovered first (nothing of initd's runs yet)."""
    from initd.hooks import context, recovery  # status, json, threads: on demand

    ctx = context.make(config, account, logger, context.session_id(config.session_id, logger),
                       recover=recovery.any_runner)
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
    from initd.hooks import precommit

    try:
        with log.phase(logger, "pre-commit chain") as fields:
            fields["result"] = precommit.install(repo, hooks, session_id=session,
                                                 secrets=secrets)
            if account is not None and precommit.trust_for(repo, account):
                fields["safe_directory"] = repo.top
    except (InitdError, OSError, subprocess.SubprocessError) as err:
        logger.warning("pre-commit chain not installed", repo=repo.top, error=str(err))


def wants_service(config: settings.Settings) -> bool:
    """--service/--no-service decide; by default the hook service runs when there is a
    workspace to serve (named, or with hooks), so `initd -- cmd` used tini-style stays
    two small processes."""
    if config.service is not None:
        return config.service
    return config.workspace_given or os.path.isdir(paths.workspace_hooks(config.workspace))


def start_service(config: settings.Settings, account: users.Account | None,
                  ctx: HookContext, roots: RootHooks | None, repo: precommit.Repo | None,
                  signals: SignalChannel, logger: log.Logger) -> ServiceChild | None:
    """The hook service as a supervised child, as the agent user, on the socket root binds
    here; waits (bounded) until it serves. Root runs its run_as: root hooks for it, from
    the copies taken at boot (supervisor/roothooks.py). It starts isolated (invariant 8):
    ``python -I`` from /, so nothing in the workspace (an ``initd/`` package, a
    ``sitecustomize.py``) or the environment (PYTHONPATH) is imported instead of initd."""
    import json

    from initd import httpd
    from initd.supervisor.hookservice import ServiceChild

    try:
        listener = httpd.bind(config.socket, account.gid if account is not None else None)
    except InitdError as err:
        if config.service:  # asked for by name: initd's own error
            raise
        logger.warning("hook service not started", error=str(err))
        return None
    argv = [sys.executable, "-I", "-m", "initd", "service",
            "--agent-command", json.dumps(list(config.command))]
    env = proc.environment(os.environ, account,
                           service_settings(config, ctx.session_id, account),
                           remove=config.secret)
    service = ServiceChild(
        proc.Spec(argv=tuple(argv), cwd="/", account=account, env=env, stdout=proc.DEVNULL),
        listener=listener, ctx=ctx, roots=roots,
        precommit=precommit_refresh(repo, env),
        window=config.restart_window, grace=config.grace, log=logger)
    with log.phase(logger, "hook service start", socket=config.socket):
        service.start()  # the agent does not wait for it: a request made before the
    return service  # service serves waits in the socket's backlog, as during a restart


def precommit_refresh(repo: precommit.Repo | None, env: dict[str, str]) -> proc.Spec | None:
    """How the chain is rewritten when the service asks: ``initd precommit install`` as
    the repository's owner (the agent, for its own repository), isolated like the
    service, with its settings (``env``); None when there is no repository with a chain
    to keep."""
    if repo is None:
        return None
    owner = None if repo.owner[0] == os.geteuid() else users.lookup(str(repo.owner[0]))
    argv = [sys.executable, "-I", "-m", "initd", "precommit", "install"]  # settings: env
    return proc.Spec(argv=tuple(argv), cwd="/", account=owner,
                     env={**env, **(owner.env() if owner is not None else {})})


def service_settings(config: settings.Settings, session: str,
                     account: users.Account | None) -> dict[str, str]:
    """Every setting the hook service (and the chain's rewrite) reads, resolved here, as
    the variables it reads them from: one channel, the environment; its command line
    carries only the plumbing (the inherited socket and channel, the agent's command)."""
    env = {"INITD_WORKSPACE": config.workspace, "INITD_SESSION_ID": session,
           "INITD_HOOKS_DIR": config.hooks_dir, "INITD_SOCKET": config.socket,
           "INITD_MAX_REPROMPTS": str(config.max_reprompts),
           "INITD_LOG_FORMAT": config.log_format, "INITD_VERBOSE": str(config.verbose),
           "INITD_GRACE": f"{config.grace:g}", "INITD_SECRETS": ",".join(config.secret),
           "INITD_TRUST": "1" if config.trust else "0", "INITD_TRUST_FILE": config.trust_file}
    if account is not None:
        env["INITD_USER"] = account.name
    if config.config is not None:
        env["INITD_CONFIG"] = config.config
    if config.state_dir is not None:
        env["INITD_STATE_DIR"] = config.state_dir
    return env


def agent_environment(config: settings.Settings, account: users.Account | None,
                      service: ServiceChild | None) -> dict[str, str]:
    """initd's environment, the agent user's login variables, and INITD_SOCKET only when
    a hook service really serves there (it tells the agent that one does)."""
    env = proc.environment(os.environ, account, remove=("INITD_SOCKET",))
    if service is not None:
        env["INITD_SOCKET"] = config.socket
    if config.state_dir is not None:  # the agent's `initd hooks status` reads it there
        env["INITD_STATE_DIR"] = config.state_dir
    return env


def agent_readiness(config: settings.Settings) -> dict[str, Any]:
    """How the agent's readiness is judged: its URL, its port, or (no check) at once."""
    if config.ready_url is None and config.ready_port is None:
        return {}
    from initd.supervisor import readiness  # sockets, threads, urllib: only when there is a check

    if config.ready_url is not None:
        return {"ready_check": readiness.url_check(config.ready_url),
                "ready_by": config.ready_url}
    assert config.ready_port is not None
    return {"ready_check": readiness.port_check(config.ready_port),
            "ready_by": f"port {config.ready_port}"}


def describe(agent: Supervised, service: Supervised | None, phase: str) -> dict[str, Any]:
    """The supervisor's view, for /v1/health and /v1/ready, /healthz and /readyz."""
    return {"initd": {"pid": os.getpid(), "phase": phase, "version": __version__},
            "agent": agent.describe(),
            "service": service.describe() if service is not None else None}


def tell(state: dict[str, Any], service: ServiceChild | None, probes: Probes | None) -> None:
    if service is not None:
        service.push(state)
    if probes is not None:
        probes.update(state)


def start_probes(config: settings.Settings) -> Probes | None:
    if config.health_port is None:
        return None
    from initd.supervisor.health import Probes

    return Probes(config.health_port)


def supervise(agent: Supervised, signals: SignalChannel, logger: log.Logger,
              service: ServiceChild | None = None, probes: Probes | None = None) -> int:
    """Until the agent is done: forward signals, restart by policy, stop on the stop signal.
    The hook service, if any, is kept alive alongside and told of every change; only the
    agent's fate ends it."""
    children: list[Supervised] = [agent] if service is None else [agent, service]
    while not agent.state.final:
        tell(describe(agent, service, "running"), service, probes)
        fds = [signals.fileno(), *(w.fileno() for child in children for w in child.waitables())]
        timeouts = [t for t in (child.timeout() for child in children) if t is not None]
        select.select(fds, [], [], min(timeouts) if timeouts else None)
        for sig in signals.drain():
            if sig in signals.stop_signals:
                # not ready from now on: traffic goes elsewhere
                tell(describe(agent, service, "stopping"), service, probes)
                return stop(agent, sig, signals, logger)
            agent.forward(sig)
        for child in children:
            child.tick()
    assert agent.last_code is not None
    return agent.last_code


def stop(agent: Supervised, sig: int, signals: SignalChannel, logger: log.Logger) -> int:
    """Step 7: the agent gets the stop signal, then --grace, then KILL; its code is ours.
    Every signal that comes meanwhile is passed on too (a second TERM included, which
    does not start the grace again): CMD decides what it means (invariant 9)."""
    with log.phase(logger, "agent stop", signal=signal.Signals(sig).name) as result:
        result["code"] = code = agent.stop(sig, signals)
    return code
