"""The environments one boot's processes get from devcontainer.json
(initd/devcontainer/procenv.py): the commands' (containerEnv, then remoteEnv, never a
secret, initd's own variables), the agent's, and containerEnv alone for the other
processes that run as the agent; none of the file's unless ``--trust`` approves it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.devcontainer.config import parse
from initd.devcontainer.procenv import ProcessEnv
from initd.devcontainer.users import trust_entries
from initd.hooks.context import HookContext
from initd.hooks.trust import Trust
from initd.process.spec import HOOK_ENV
from tests.hooks.support import forget_session, git_repo, hook_context

DATA = {"containerEnv": {"TOOLS": "${localEnv:HOME}/tools", "TOKEN": "from-file"},
        "remoteEnv": {"TOOLS": "${containerEnv:TOOLS}:/r", "GONE": None, "R": "1"}}


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HookContext]:
    monkeypatch.setenv("GONE", "was here")
    monkeypatch.setenv("TOKEN", "secret")
    sid = f"procenv-{uuid.uuid4().hex[:8]}"
    made = hook_context(git_repo(tmp_path / "ws"), sid)._replace(secrets=("TOKEN",))
    yield made
    forget_session(sid)


def env_of(ctx: HookContext) -> ProcessEnv:
    config = parse(DATA, f"{ctx.workspace}/.devcontainer/devcontainer.json", ctx.workspace)
    return ProcessEnv(config, ctx, None)


def test_the_commands_environment(ctx: HookContext) -> None:
    made = env_of(ctx).commands()
    home = made["HOME"]
    assert made["TOOLS"] == f"{home}/tools:/r" and made["R"] == "1"
    assert "GONE" not in made and "TOKEN" not in made  # null unsets; a secret never
    assert made["DISCOBOT_HOOK_TYPE"] == "devcontainer"
    assert all(made[k] == v for k, v in HOOK_ENV.items())


def test_the_agents_and_the_other_processes(ctx: HookContext) -> None:
    made = env_of(ctx)
    agent = made.agent({"PATH": "/bin", "GONE": "x"})
    assert agent["TOOLS"].endswith("/tools:/r") and "GONE" not in agent
    assert dict(made.container_env())["TOOLS"].endswith("/tools")
    assert "R" not in dict(made.container_env())  # remoteEnv: the commands' and the agent's


def test_not_approved_none_of_the_files_environment(ctx: HookContext,
                                                    tmp_path: Path) -> None:
    trust = Trust(str(tmp_path / "trust.json"), enforce=True)
    refused = env_of(ctx._replace(trust=trust))
    assert not refused.trusted and refused.container_env() == ()
    assert refused.agent({"PATH": "/bin"}) == {"PATH": "/bin"}
    config = parse(DATA, f"{ctx.workspace}/.devcontainer/devcontainer.json", ctx.workspace)
    trust.approve([e for e in trust_entries(config) if e.key.endswith("#environment")])
    assert env_of(ctx._replace(trust=trust)).trusted
