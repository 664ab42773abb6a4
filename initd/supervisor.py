"""The supervisor: the boot sequence of DESIGN.md §2, then supervision until the end.

Runs in the process PID 1 forked (pid1.run), as an ordinary process: it waits only for
its own children, through their pidfds.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import time

from initd import log, options, pid1, proc, settings, users
from initd.backoff import Backoff
from initd.sigchan import SignalChannel
from initd.supervised import Supervised

STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT, signal.SIGQUIT})


def main(argv: list[str]) -> int:
    """The supervisor process: parse the command line, then boot."""
    return boot(options.parse(argv))


def boot(flags: argparse.Namespace) -> int:
    """The supervisor's whole life, step by step. Returns the container's exit code."""
    signals = SignalChannel(pid1.FORWARDED)  # 0. take the signals PID 1 kept for us
    started = time.monotonic()
    config = settings.load(flags, os.environ)  # 1. settings and env files
    log.configure(config.verbose, config.log_format)
    logger = log.get(logger="supervisor")
    logger.info("settings", duration_ms=round((time.monotonic() - started) * 1000, 1),
                config_file=config.config, user=config.user, restart=str(config.restart))
    for warning in config.warnings:
        logger.warning(warning)
    account = agent_account(config)
    # 2-4: hooks and the pre-commit chain (later issues) run here, before the agent.
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
    return config.remapped(code)


def agent_account(config: settings.Settings) -> users.Account | None:
    """The agent user from --user, or None: the agent runs as whoever started initd."""
    if config.user is None:
        return None
    account = users.lookup(config.user)
    users.require_can_become(account)
    return account


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
