"""Who runs devcontainer.json's commands (remoteUser, containerUser, the agent: never
anyone but the agent when the agent is not root), and what ``initd hooks trust``
approves of the file."""

from __future__ import annotations

import hashlib
import json
from typing import NamedTuple

from initd.devcontainer.model import Config
from initd.errors import InitdError, shown
from initd.hooks.trust import Entry
from initd.process import users


class Runner(NamedTuple):
    """Who the commands run as, and the one line that says why not the user named."""

    account: users.Account | None  # None: nobody can run them (an unknown user)
    named: str | None  # the user the file names, and under which key
    key: str | None
    warning: str | None


def runner_for(config: Config, agent: users.Account) -> Runner:
    """remoteUser, else containerUser, else the agent. The file is the agent's to write,
    so when the agent is not root it names nobody else (invariant 8: root never runs
    what the agent can write as root or as another user): the commands run as the
    agent, and a warning says so. An agent that is root may name anyone: that is a
    privilege drop. A user passwd does not know is an error: nothing runs."""
    key, named = (("remoteUser", config.remote_user) if config.remote_user else
                  ("containerUser", config.container_user) if config.container_user else
                  (None, None))
    if named is None:
        return Runner(agent, None, None, None)
    try:
        account: users.Account | None = users.lookup(named)
    except InitdError:
        account = None
    if agent.uid != 0:
        if (account is not None and account.uid == agent.uid) or named == agent.name:
            return Runner(agent, named, key, None)
        return Runner(agent, named, key, (
            f"{config.path}: {key} {shown(named)}: the commands run as the agent user "
            f"{shown(agent.name)} instead: the agent can write this file, and initd never "
            "runs what it says as anyone but the agent"))
    if account is None:
        return Runner(None, named, key, f"{config.path}: {key} {shown(named)}: no such "
                      "user in the passwd database: the lifecycle commands do not run")
    return Runner(account, named, key, None)


def trust_entries(config: Config) -> list[Entry]:
    """What ``initd hooks trust`` approves: each stage (its commands, with the users and
    the environment they run with), and the environment the agent gets from the file."""
    common = [config.remote_user, config.container_user, list(config.container_env),
              list(config.remote_env), config.timeout, list(config.limits)]
    entries = []
    for stage in config.stages:
        what = json.dumps([config.path, stage.key, stage.raw, *common], sort_keys=True)
        entries.append(Entry(f"{config.path}#{stage.key}",
                             hashlib.sha256(what.encode()).hexdigest(),
                             f"devcontainer {stage.key} ({config.path})"))
    if config.container_env or config.remote_env:
        what = json.dumps([config.path, "environment", list(config.container_env),
                           list(config.remote_env)], sort_keys=True)
        entries.append(Entry(f"{config.path}#environment",
                             hashlib.sha256(what.encode()).hexdigest(),
                             f"devcontainer containerEnv and remoteEnv ({config.path})"))
    return entries
