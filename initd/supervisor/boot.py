"""The supervisor: the boot sequence (ARCHITECTURE.md, "The boot sequence"), then
supervision until the end.

Runs in the process PID 1 forked (pid1/reaper.run), as an ordinary process: it waits only for
its own children, through their pidfds.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import TYPE_CHECKING

from initd import __version__
from initd.config import log, settings
from initd.errors import shown
from initd.pid1.signals import FORWARDED, signal_name
from initd.process import spawn, users
from initd.state import agentfs
from initd.supervisor.backoff import Backoff
from initd.supervisor.children import (
    agent_environment,
    agent_readiness,
    bind_socket,
    start_service,
    wants_service,
)
from initd.supervisor.shutdown import Shutdown
from initd.supervisor.sigchan import SignalChannel
from initd.supervisor.supervised import Supervised
from initd.supervisor.workspace import (
    dev_container,
    devcontainer_phase,
    discover_hooks,
    find_devcontainer,
    find_repo,
    hook_context,
    install_precommit,
    root_copies,
    session_hooks,
    wants_precommit,
)

PROBLEMS_LOOK = 2.0  # seconds between looks at problems that end by themselves

# What only a workspace with hooks or a repository needs is imported on demand:
# `initd -- cmd`, tini-style, starts CMD without them.
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from initd.hooks import precommit
    from initd.hooks.context import HookContext
    from initd.supervisor.deferred import DeferredService
    from initd.supervisor.health import Probes
    from initd.supervisor.hookservice import ServiceChild



def boot(flags: argparse.Namespace) -> int:
    """The supervisor's whole life, step by step. Returns the container's exit code."""
    signals = SignalChannel(FORWARDED, {signal.SIGTERM})  # 0. the signals PID 1 kept
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
    rest = Shutdown(config.grace)  # what is stopped beside the agent, and after it
    held = None  # the guard snapshot's memory file, for every start of the hook service
    try:
        repo = find_repo(config, account, signals, logger) if wants_precommit(config) \
            else None
        if signals.stop.is_set():  # stopped during boot's git: never start the agent
            return stopped_at_boot(config, signals, logger)
        serve = wants_service(config)
        devcontainer_json = find_devcontainer(config)  # (its parser only when there is one)
        ctx = None  # the hooks' state, made (and the last run's records recovered) before
        if repo is not None or devcontainer_json is not None or any(  # any hook runs;
                hook.type == "session" for hook in hooks):  # with none, after the agent
            ctx = hook_context(config, account, logger)._replace(snapshots=roots)
        dev = None if devcontainer_json is None else devcontainer_phase(ctx, logger)
        if dev is not None and ctx is not None:  # (read first: its containerEnv is theirs)
            ctx = ctx._replace(container_env=dev.container_env())
        rest.background = session_hooks(hooks, ctx, signals, logger)  # 3. session hooks
        if signals.stop.is_set():  # stopped during the session hooks: never start the agent
            return stopped_at_boot(config, signals, logger)  # (no background hook begun)
        if dev is not None:  # 3b. devcontainer.json's lifecycle commands
            rest.lifecycle = dev_container(dev, signals, logger)
        if repo is not None and ctx is not None and not signals.stop.is_set():  # 4. chain
            install_precommit(repo, account, hooks, ctx.session_id, config.secret, logger)
        if signals.stop.is_set():  # stopped during them, or the chain's git: no agent
            return stopped_at_boot(config, signals, logger)
        refused_chowns(logger)
        if not serve:
            return run_agent(config, account, rest, signals, logger, probes)
        from initd.supervisor import guards  # (runner, its pipes: only with a service)

        held = guards.take(config, account, signals, logger)  # 4b. the guard snapshot
        if signals.stop.is_set():  # stopped while it was read: no agent
            return stopped_at_boot(config, signals, logger)
        return agent_then_service(config, account, rest, signals, logger, probes, ctx, repo,
                                  held)
    finally:
        rest.finish()  # (what was not stopped yet: a stop before the agent, an error)
        if roots is not None:
            roots.close()
        if probes is not None:
            probes.close()
        if held is not None:  # (after the service's end: rest.finish)
            os.close(held)


def agent_then_service(config: settings.Settings, account: users.Account | None,
                       rest: Shutdown, signals: SignalChannel, logger: log.Logger,
                       probes: Probes | None, ctx: HookContext | None,
                       repo: precommit.Repo | None, held: int) -> int:
    """5. The control socket bound (a request made before the hook service serves waits
    in its backlog), the agent started, and then the hook service, when it is first
    needed (deferred.py: a connection, or the agent has run a while), with the guard
    snapshot ``held`` and the hooks' state when no hook ran before the agent (made then:
    hook_context's ``agent_started``)."""
    listener = bind_socket(config, account, logger)
    if listener is None:
        return run_agent(config, account, rest, signals, logger, probes)
    from initd.supervisor.deferred import DeferredService, close_listener

    def service() -> ServiceChild:
        made = ctx if ctx is not None else hook_context(config, account, logger,
                                                         agent_started=True)
        refused_chowns(logger)
        return start_service(config, account, made, repo, listener, held, logger)

    try:
        return run_agent(config, account, rest, signals, logger, probes,
                         lambda agent: DeferredService(
                             listener, service, lambda: agent.child is not None, logger))
    finally:
        if rest.service is None:  # stopped before the agent started: no service
            close_listener(listener)


def run_agent(config: settings.Settings, account: users.Account | None, rest: Shutdown,
              signals: SignalChannel, logger: log.Logger, probes: Probes | None = None,
              service_after: Callable[[Supervised], DeferredService] | None = None
              ) -> int:
    """5b-7: the agent first, then (``service_after``) its hook service, started when
    first needed, and what the agent does not wait for; supervised until the agent ends
    or initd is told to stop; then the rest (shutdown.py: the stop's one budget)."""
    lifecycle = rest.lifecycle
    env = agent_environment(config, account, serving=service_after is not None)
    service: DeferredService | None = None
    agent = Supervised(  # 5b. the agent
        "agent",
        spawn.Spec(argv=config.command, env=env if lifecycle is None else
                  lifecycle.agent_env(env),
                  cwd=os.getcwd(), account=account, stdin=spawn.INHERIT, terminal=True),
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
        if service_after is not None:  # (a request the agent makes waits in its backlog
            service = rest.service = service_after(agent)  # and starts the service)
        code = supervise(agent, signals, logger, service, probes, rest.begin,  # 6-7.
                         lifecycle.attach if lifecycle is not None else None)
    finally:
        tell(describe(agent, service, "stopping"), service, probes)
        rest.finish()  # the agent first, then its hook service; the rest with them
    return config.remapped(code)


def refused_chowns(logger: log.Logger) -> None:
    for path in agentfs.refused_chowns():  # (said once: --cap-drop CHOWN)
        logger.warning("cannot give what root made for the agent to the agent (no "
                       "CAP_CHOWN?): its hook service may not write its state there",
                       path=path)


def stopped_at_boot(config: settings.Settings, signals: SignalChannel,
                    logger: log.Logger) -> int:
    """The stop signal came before the agent started: 128+signal, as if it had."""
    logger.info("stopped before the agent started", signal=signals.stop_signal)
    return config.remapped(128 + signals.stop_signal)


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


def describe(agent: Supervised, service: DeferredService | None, phase: str
             ) -> dict[str, Any]:
    """The supervisor's view, for /v1/health and /v1/ready, /healthz and /readyz: with
    what it cannot keep (hook results a full disk refused: written when it allows)."""
    mine: dict[str, Any] = {"pid": os.getpid(), "phase": phase, "version": __version__}
    status = sys.modules.get("initd.hooks.status.store")  # (only a boot with hooks has it)
    problems = status.backlog_problems() if status is not None else []
    if problems:
        mine["problems"] = problems
    return {"initd": mine, "agent": agent.describe(),
            "service": service.describe() if service is not None else None}


def tell(state: dict[str, Any], service: DeferredService | None,
         probes: Probes | None) -> None:
    if service is not None:
        service.push(state)
    if probes is not None:  # (and for /metrics, what the hook service counted)
        probes.update(state, service.hook_counts() if service is not None else None)


def start_probes(config: settings.Settings) -> Probes | None:
    if config.health_port is None:
        return None
    from initd.supervisor.health import Probes

    return Probes(config.health_port)


def supervise(agent: Supervised, signals: SignalChannel, logger: log.Logger,
              service: DeferredService | None = None, probes: Probes | None = None,
              stopping: Callable[[], None] | None = None,
              up: Callable[[], None] | None = None) -> int:
    """Until the agent is done: forward signals, restart by policy, stop on the stop signal.
    The hook service, if any, is kept alive alongside and told of every change; only the
    agent's fate ends it. ``up`` is called once, when the agent is first running (ready,
    with a readiness check): devcontainer.json's postAttachCommand waits for it."""
    children: list[Supervised | DeferredService] = [agent] if service is None \
        else [agent, service]
    while not agent.state.final:
        state = describe(agent, service, "running")
        tell(state, service, probes)
        if up is not None and state["agent"]["ready"]:
            up()
            up = None  # (once)
        fds = [signals.fileno(), *(w.fileno() for child in children for w in child.waitables())]
        timeouts = [t for t in (child.timeout() for child in children) if t is not None]
        if state["initd"].get("problems"):  # (look again: they end without waking us)
            timeouts.append(PROBLEMS_LOOK)
        spawn.wait_fds(fds, min(timeouts) if timeouts else None)  # (poll: invariant 13)
        received = signals.drain()
        for at, sig in enumerate(received):
            if sig in signals.stop_signals:
                # (what came after it is passed on during the stop, after it: invariant 9)
                signals.put_back(received[at + 1:])
                # not ready from now on: traffic goes elsewhere
                tell(describe(agent, service, "stopping"), service, probes)
                if stopping is not None:  # what stops beside the agent (shutdown.py)
                    stopping()
                return stop(agent, sig, signals, logger, service)
            agent.forward(sig)
        for child in children:
            child.tick()
    assert agent.last_code is not None
    return agent.last_code


def stop(agent: Supervised, sig: int, signals: SignalChannel, logger: log.Logger,
         service: DeferredService | None = None) -> int:
    """Step 7: the agent gets the stop signal, then --grace, then KILL; its code is ours.
    Every signal that comes meanwhile is passed on too (a second TERM included, which
    does not start the grace again): CMD decides what it means (invariant 9). A hook
    service not started yet starts at a connection meanwhile (the agent's last events)."""
    with log.phase(logger, "agent stop", signal=signal_name(sig)) as result:
        result["code"] = code = agent.stop(sig, signals, beside=service)
    return code
