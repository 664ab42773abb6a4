"""Who devcontainer.json's commands run as (initd/devcontainer/users.py): never root, nor
anyone else, for a non-root agent; and the trust entries that hash what runs."""

from __future__ import annotations

import pytest

from initd.devcontainer.config import parse
from initd.devcontainer.model import Config
from initd.devcontainer.users import runner_for, trust_entries
from initd.process import users


def account(name: str) -> users.Account:
    return users.lookup(name)


def load(data: object) -> Config:
    config = parse(data, "/ws/.devcontainer/devcontainer.json", "/ws")
    assert config.errors == (), config.errors
    return config


@pytest.mark.parametrize("data, agent, runs_as, warned", [
    ({}, "nobody", "nobody", False),
    ({"remoteUser": "nobody"}, "nobody", "nobody", False),
    ({"remoteUser": "65534"}, "nobody", "nobody", False),
    ({"remoteUser": "root"}, "nobody", "nobody", True),  # never root for a non-root agent
    ({"containerUser": "root"}, "nobody", "nobody", True),
    ({"remoteUser": "daemon"}, "nobody", "nobody", True),  # nor anyone else
    ({"remoteUser": "no-such-user-x"}, "nobody", "nobody", True),
    ({}, "root", "root", False),
    ({"remoteUser": "nobody", "containerUser": "daemon"}, "root", "nobody", False),
    ({"containerUser": "daemon"}, "root", "daemon", False),  # a privilege drop: fine
    ({"remoteUser": "no-such-user-x"}, "root", None, True),  # nothing runs
])
def test_who_the_commands_run_as(data: object, agent: str, runs_as: str | None,
                                 warned: bool) -> None:
    config = load(data)
    chosen = runner_for(config, account(agent))
    assert (chosen.account.name if chosen.account else None) == runs_as
    assert (chosen.warning is not None) == warned
    if warned:
        key = "remoteUser" if "remoteUser" in data else "containerUser"  # type: ignore[operator]
        assert chosen.warning.startswith(f"{config.path}: {key} ")  # type: ignore[union-attr]


def test_trust_hashes_what_runs() -> None:
    base = {"onCreateCommand": "a", "postStartCommand": ["b"], "remoteEnv": {"X": "1"}}
    entries = trust_entries(load(base))
    assert [e.key.rpartition("#")[2] for e in entries] == [
        "onCreateCommand", "postStartCommand", "environment"]
    assert trust_entries(load(base)) == entries  # stable
    changed = trust_entries(load({**base, "postStartCommand": ["c"]}))
    assert [a == b for a, b in zip(entries, changed, strict=True)] == [True, False, True]
    as_root = trust_entries(load({**base, "remoteUser": "root"}))
    assert [a == b for a, b in zip(entries, as_root, strict=True)] == [False, False, True]
    env = trust_entries(load({**base, "remoteEnv": {"X": "2"}}))
    assert [a == b for a, b in zip(entries, env, strict=True)] == [False, False, False]
