"""The supervisor: the boot sequence of DESIGN.md §2, then supervision until the end.

Runs in the process PID 1 forked (pid1.run), as an ordinary process: it waits only for
its own children, through their pidfds.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING

from initd import log, options, pid1, proc, settings, users
from initd.backoff import Backoff
from initd.errors import InitdError
from initd.hooks import discovery, precommit
from initd.hooks.model import Hook
from initd.sigchan import SignalChannel
from initd.supervised import Supervised

if TYPE_CHECKING:
    from initd.hooks.session import Background

STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT, signal.SIGQUIT})


def main(argv: list[str]) -> int:
    """The supervisor process: parse the command line, then boot."""
    return boot(options.parse(argv))


def boot(flags: argparse.Namespace) -> int:
    """The supervisor's whole life, step by step. Returns the container's exit code."""
    signals = SignalChannel(pid1.FORWARDED, STOP_SIGNALS)  # 0. the signals PID 1 kept
    started = time.monotonic()
    config = settings.load(flags, os.environ)  # 1. settings and env files
    log.configure(config.verbose, config.log_format)
    logger = log.get(logger="supervisor")
    logger.info("settings", duration_ms=round((time.monotonic() - started) * 1000, 1),
                config_file=config.config, user=config.user, restart=str(config.restart))
    for warning in config.warnings:
        logger.warning(warning)
    account = agent_account(config)
    hooks = discover_hooks(config, logger)  # 2. the image's and the workspace's hooks
    repo = precommit.Repo.find(config.workspace) if wants_precommit(config) else None
    session = None
    if repo is not None or config.socket or any(hook.type == "session" for hook in hooks):
        from initd.hooks import session as sessions  # status, json, threads: on demand

        session = sessions.session_id(config, logger)
    background = session_hooks(config, account, hooks, session, signals, logger)  # 3.
    if signals.stop.is_set():  # stopped during the session hooks: never start the agent
        logger.info("stopped before the agent started", signal=signals.stop_signal)
        return config.remapped(128 + signals.stop_signal)  # (no background hook was begun)
    if repo is not None and session is not None:
        install_precommit(repo, account, hooks, session, logger)  # 4. the git chain
    service = None
    if config.socket and session is not None:  # 5a. the hook service, ready before the agent
        service = start_service(config, account, session, logger)
    extra = {"INITD_SOCKET": config.socket} if service is not None and config.socket else None
    agent = Supervised(  # 5b. the agent
        "agent",
        proc.Spec(argv=config.command, env=proc.environment(os.environ, account, extra),
                  cwd=os.getcwd(), account=account, stdin=proc.INHERIT, terminal=True),
        restart=config.restart,
        backoff=Backoff(max_restarts=config.max_restarts, window=config.restart_window),
        grace=config.grace,
        log=logger,
    )
    with log.phase(logger, "agent start"):
        agent.start()
    code = supervise(agent, signals, logger, service)  # 6-7. until it ends or we stop
    if service is not None:
        service.stop(signal.SIGTERM)  # the agent first, then its hook service
    if background is not None:
        background.stop()  # blocking: false session hooks still running go with us
    return config.remapped(code)


def agent_account(config: settings.Settings) -> users.Account | None:
    """The agent user from --user, or None: the agent runs as whoever started initd."""
    if config.user is None:
        return None
    account = users.lookup(config.user)
    users.require_can_become(account)
    return account


def discover_hooks(config: settings.Settings, logger: log.Logger) -> tuple[Hook, ...]:
    """Every hook of both directories; each file that is not one gets a line saying why."""
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


def session_hooks(config: settings.Settings, account: users.Account | None,
                  hooks: tuple[Hook, ...], session: str | None, signals: SignalChannel,
                  logger: log.Logger) -> Background | None:
    """Run the session hooks; failures are logged and recorded, never fatal."""
    if not any(hook.type == "session" for hook in hooks):
        return None
    from initd.hooks import session as sessions  # status, json, threads: on demand

    with log.phase(logger, "session hooks"):
        ctx = sessions.context(config, account, logger, session,
                               recover=("session", "file", "pre-commit"))
        return sessions.run_session_hooks(hooks, ctx, cancel=signals.stop)


def wants_precommit(config: settings.Settings) -> bool:
    """Only a workspace someone named, or one with hooks, gets the chain: `initd -- cmd`
    used tini-style inside some git checkout must not rewrite that checkout's hooks."""
    return config.precommit and (
        config.workspace_given or os.path.isdir(discovery.workspace_dir(config.workspace)))


def install_precommit(repo: precommit.Repo, account: users.Account | None,
                      hooks: tuple[Hook, ...], session: str, logger: log.Logger) -> None:
    """Install (or refresh) the managed chain; a refusal is a warning, never fatal."""
    try:
        with log.phase(logger, "pre-commit chain") as fields:
            fields["result"] = precommit.install(
                repo, [hook for hook in hooks if hook.type == "pre-commit"],
                session_id=session, initd=precommit.initd_command())
            if account is not None and precommit.trust_for(repo, account.home,
                                                           (account.uid, account.gid)):
                fields["safe_directory"] = repo.top
    except (InitdError, OSError, subprocess.SubprocessError) as err:
        logger.warning("pre-commit chain not installed", repo=repo.top, error=str(err))


def start_service(config: settings.Settings, account: users.Account | None, session: str,
                  logger: log.Logger) -> Supervised:
    """The hook service as a supervised child, as the agent user: restarted always (with
    the capped backoff), never taking the agent down. Waits until its socket answers."""
    assert config.socket is not None
    argv = [sys.executable, "-m", "initd", "service", "--socket", config.socket,
            "--workspace", config.workspace, "--session-id", session,
            "--hooks-dir", config.hooks_dir]
    if account is not None:
        argv += ["--user", account.name]
    service = Supervised(
        "hook-service",
        proc.Spec(argv=tuple(argv), env=proc.environment(os.environ, account, {
            "INITD_LOG_FORMAT": config.log_format, "INITD_VERBOSE": str(config.verbose)}),
                  cwd=config.workspace, account=account, stdout=proc.DEVNULL),
        restart=settings.Restart.ALWAYS,
        backoff=Backoff(max_restarts=2**31, window=config.restart_window),
        grace=config.grace, log=logger)
    directory = os.path.dirname(os.path.abspath(config.socket))
    if not os.path.isdir(directory):  # e.g. /run/initd: the service (the agent) binds here
        os.makedirs(directory, mode=0o755)
        if account is not None and os.geteuid() == 0:
            os.chown(directory, account.uid, account.gid)
    with log.phase(logger, "hook service start", socket=config.socket) as fields:
        service.start()
        fields["ready"] = wait_for_socket(config.socket, service)
    return service


def wait_for_socket(path: str, service: Supervised, timeout: float = 10.0) -> bool:
    """True once a connection succeeds; False if the service died or time ran out (the
    agent starts anyway: a hook service is never a reason not to run the agent)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(path)
                return True
            except OSError:
                pass
        if service.child is None or service.child.poll() is not None:
            return False
        time.sleep(0.02)
    return False


def supervise(agent: Supervised, signals: SignalChannel, logger: log.Logger,
              service: Supervised | None = None) -> int:
    """Until the agent is done: forward signals, restart by policy, stop on TERM/INT/QUIT.
    The hook service, if any, is kept alive alongside; only the agent's fate ends it."""
    children = [agent] if service is None else [agent, service]
    while not agent.state.final:
        fds = [signals.fileno(), *(c.fileno() for child in children for c in child.waitables())]
        timeouts = [t for t in (child.timeout() for child in children) if t is not None]
        select.select(fds, [], [], min(timeouts) if timeouts else None)
        for sig in signals.drain():
            if sig in STOP_SIGNALS:
                return stop(agent, sig, logger)
            agent.forward(sig)
        for child in children:
            child.tick()
    assert agent.last_code is not None
    return agent.last_code


def stop(agent: Supervised, sig: int, logger: log.Logger) -> int:
    """Step 7: the agent gets the signal we got, then --grace, then KILL; its code is ours."""
    with log.phase(logger, "agent stop", signal=signal.Signals(sig).name) as result:
        result["code"] = code = agent.stop(sig)
    return code
