"""What the supervised children get: the hook service's start (its socket, its settings,
the pre-commit chain's rewrite it may ask for) and the agent's environment and
readiness check."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from initd.config import log, paths, settings
from initd.errors import InitdError
from initd.process import limits, spawn, users

if TYPE_CHECKING:
    import socket
    from typing import Any

    from initd.hooks import precommit
    from initd.hooks.context import HookContext
    from initd.supervisor.hookservice import ServiceChild
    from initd.supervisor.services import ServiceSet


def wants_service(config: settings.Settings) -> bool:
    """--service/--no-service decide; by default the hook service runs when there is a
    workspace to serve (named, or with hooks), so `initd -- cmd` used tini-style stays
    two small processes."""
    if config.service is not None:
        return config.service
    return config.workspace_given or os.path.isdir(paths.workspace_hooks(config.workspace))


def bind_socket(config: settings.Settings, account: users.Account | None,
                logger: log.Logger) -> socket.socket | None:
    """The control socket, bound and listening before the agent starts: a request the
    agent makes before the hook service serves waits in its backlog, as during a restart.
    None when it cannot be bound and the service was not asked for by name (a warning)."""
    from initd.http import bind

    try:
        return bind.listen(config.socket, account.gid if account is not None else None)
    except InitdError as err:
        if config.service:  # asked for by name: initd's own error
            raise
        logger.warning("hook service not started", error=str(err))
        return None


def start_service(config: settings.Settings, account: users.Account | None,
                  ctx: HookContext, repo: precommit.Repo | None,
                  listener: socket.socket, guards: int, logger: log.Logger,
                  services: ServiceSet | None = None) -> ServiceChild:
    """The hook service as a supervised child, as the agent user, on the socket bound
    before the agent started. Every hook it runs runs as the agent: root runs no hook once
    the agent runs (invariant 11). It starts isolated (invariant 8):
    ``python -I`` from /, so nothing in the workspace (an ``initd/`` package, a
    ``sitecustomize.py``) or the environment (PYTHONPATH) is imported instead of initd.
    Every start of it gets ``guards``, the session's sealed guard snapshot
    (supervisor/guards.py)."""
    import json

    from initd.supervisor.hookservice import ServiceChild

    argv = [sys.executable, "-I", "-m", "initd", "service",
            "--agent-command", json.dumps(list(config.command))]
    own = service_settings(config, ctx.session_id, account)
    env = spawn.environment(os.environ, account, own, remove=config.secret)
    service = ServiceChild(
        spawn.Spec(argv=tuple(argv), cwd="/", account=account, stdout=spawn.DEVNULL,
                  env=spawn.environment(os.environ, account,
                                       {**container_env(ctx), **own}, remove=config.secret)),
        listener=listener, guards=guards,
        precommit=precommit_refresh(repo, env, account),  # (never containerEnv)
        window=config.restart_window, grace=config.grace, log=logger)
    if services is not None:  # what the agent may ask of them: only of its own uid's
        uid = account.uid if account is not None else None
        service.control = lambda name, verb: services.control(name, verb, uid)
    with log.phase(logger, "hook service start", socket=config.socket):
        service.start()
    return service


def container_env(ctx: HookContext) -> dict[str, str]:
    """devcontainer.json's containerEnv, for the hook service and so every hook it runs
    (they run as the agent: the file is the agent's to write, and root's processes never
    get it), without the variables initd's settings are read from (SESSION_ID,
    AGENT_USER, WORKSPACE_PATH): initd's own, even where the service would read them;
    nor those that name an image's hook file (Gemini CLI's system settings): a guard of
    the image's is never swapped for a file the workspace names."""
    from initd.events.sources import IMAGE_VARIABLES

    read = {name for option in settings.OPTIONS for name in option.env}
    read.update(IMAGE_VARIABLES)
    return {name: value for name, value in ctx.container_env if name not in read}


def precommit_refresh(repo: precommit.Repo | None, env: dict[str, str],
                      agent: users.Account | None) -> spawn.Spec | str | None:
    """How the chain is rewritten when the service asks: ``initd precommit install`` as
    the repository's owner (the agent, for its own repository), isolated like the
    service, with its settings (``env``); None when there is no repository with a chain
    to keep. For a repository of root's (one shared with the agent's group) and an
    agent that is not root, why it is not: that rewrite would be a process of uid 0
    started at the agent's request, reading the agent's files (invariant 16), so the
    chain keeps the hooks it had at the start."""
    if repo is None:
        return None
    if repo.owner[0] == 0 and agent is not None and agent.uid != 0:
        return (f"not rewritten: the repository {repo.top} is root's, and once the agent "
                "runs root starts nothing at its request; the chain keeps the pre-commit "
                "hooks it had when initd started, and is rewritten at the next start")
    owner = None if repo.owner[0] == os.geteuid() else users.lookup(str(repo.owner[0]))
    argv = [sys.executable, "-I", "-m", "initd", "precommit", "install"]  # settings: env
    return spawn.Spec(argv=tuple(argv), cwd="/", account=owner,
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
    # Every setting is here: never the image's file, which may be root's alone (0600: a
    # service's environment may hold secrets, and the service runs as the agent)
    env["INITD_CONFIG"] = os.devnull
    if config.state_dir is not None:
        env["INITD_STATE_DIR"] = config.state_dir
    if config.hook_limits.any():
        env["INITD_HOOK_LIMITS"] = limits.text(config.hook_limits)
    return env


def image_services(config: settings.Settings, account: users.Account | None,
                   logger: log.Logger) -> ServiceSet | None:
    """The image's services (services.py), checked whole; None without any (and then
    nothing of them is imported)."""
    if not config.services:
        return None
    from initd.supervisor.services import build

    return build(config, account, logger)


def agent_environment(config: settings.Settings, account: users.Account | None,
                      serving: bool) -> dict[str, str]:
    """initd's environment, the agent user's login variables, and INITD_SOCKET only when
    a hook service will serve there (its socket is bound: it tells the agent one does)."""
    env = spawn.environment(os.environ, account, remove=("INITD_SOCKET",))
    if serving:
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
