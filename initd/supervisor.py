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
    repo = precommit.Repo.find(config.workspace) if config.precommit else None
    session = None
    if repo is not None or any(hook.type == "session" for hook in hooks):
        from initd.hooks import session as sessions  # status, json, threads: on demand

        session = sessions.session_id(config, logger)
    background = session_hooks(config, account, hooks, session, signals, logger)  # 3.
    if signals.stop.is_set():  # stopped during the session hooks: never start the agent
        logger.info("stopped before the agent started", signal=signals.stop_signal)
        return config.remapped(128 + signals.stop_signal)  # (no background hook was begun)
    if repo is not None and session is not None:
        install_precommit(repo, account, hooks, session, logger)  # 4. the git chain
    agent = Supervised(  # 5. start the agent
        "agent",
        proc.Spec(argv=config.command, env=proc.environment(os.environ, account),
                  cwd=os.getcwd(), account=account, stdin=proc.INHERIT, terminal=True),
        restart=config.restart,
        backoff=Backoff(max_restarts=config.max_restarts, window=config.restart_window),
        grace=config.grace,
        log=logger,
    )
    with log.phase(logger, "agent start"):
        agent.start()
    code = supervise(agent, signals, logger)  # 6-7. supervise until it ends or we stop
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
        ctx = sessions.context(config, account, logger, session, recover=True)
        return sessions.run_session_hooks(hooks, ctx, cancel=signals.stop)


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


def supervise(agent: Supervised, signals: SignalChannel, logger: log.Logger) -> int:
    """Until the agent is done: forward signals, restart by policy, stop on TERM/INT/QUIT."""
    while not agent.state.final:
        fds = [signals.fileno(), *(child.fileno() for child in agent.waitables())]
        select.select(fds, [], [], agent.timeout())
        for sig in signals.drain():
            if sig in STOP_SIGNALS:
                return stop(agent, sig, logger)
            agent.forward(sig)
        agent.tick()
    assert agent.last_code is not None
    return agent.last_code


def stop(agent: Supervised, sig: int, logger: log.Logger) -> int:
    """Step 7: the agent gets the signal we got, then --grace, then KILL; its code is ours."""
    with log.phase(logger, "agent stop", signal=signal.Signals(sig).name) as result:
        result["code"] = code = agent.stop(sig)
    return code
