"""Fixtures of the attack suite: one agent user for the run, a fresh canary, workspace
and session for each test, and initd booted as PID 1 over them (tests/support/attack.py)."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.attack import (
    Agent,
    Canary,
    agent_for_tests,
    boot_args,
    empty_dir,
    workspace_for_tests,
)
from tests.support.harness import Initd


@pytest.fixture(scope="session")
def agent() -> Iterator[Agent]:
    yield from agent_for_tests("the attack suite makes users and boots initd as root")


# every agent's own hook config in the agent's home, and git's: a file one test plants
# there is the user's hooks (or git config) of every later test of the worker (a full run
# once saw ordinary commands blocked, and one more hook in hooks check, after an attack
# test left its ~/.gemini; another, a core.pager in ~/.gitconfig outranking the PAGER
# a later test set)
AGENT_CONFIGS = (".claude", ".codex", ".gemini", ".cursor", ".copilot", ".config/Code",
                 ".config/git", ".gitconfig")


@pytest.fixture(autouse=True)
def agents_configs_gone(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test that had the agent user, its home holds no agent's hook config
    and no git config of its own."""
    yield
    if "agent" not in request.fixturenames:
        return
    home = Path(request.getfixturevalue("agent").home)
    for name in AGENT_CONFIGS:
        path = home / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


@pytest.fixture
def canary() -> Iterator[Canary]:
    made = Canary()
    yield made
    made.remove()


@pytest.fixture
def ws(agent: Agent) -> Iterator[Path]:
    yield from workspace_for_tests(agent)


@pytest.fixture
def sid(agent: Agent) -> Iterator[str]:
    session = f"atk-{uuid.uuid4().hex[:8]}"
    yield session
    shutil.rmtree(agent.state / session, ignore_errors=True)


@pytest.fixture
def image() -> Iterator[str]:
    path = empty_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def boot(initd, agent: Agent, ws: Path, sid: str, image: str) -> Callable[..., Initd]:  # type: ignore[no-untyped-def]
    """``boot(*cmd, more=[...])``: initd as PID 1, ``--user`` the agent, over ``ws``."""
    def start(*cmd: str, more: tuple[str, ...] = (), **kwargs: object) -> Initd:
        return initd([*boot_args(agent, ws, sid, image, *more), "--", *cmd],  # type: ignore[no-any-return]
                     **kwargs)
    return start
