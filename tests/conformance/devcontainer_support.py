"""What the Dev Container specification cases share: the passages' addresses, an agent
user and its workspace, initd booted as PID 1 for it, and the waits (each a deadline on
one event). The cases are test_devcontainer_spec.py and test_devcontainer_spec_env.py."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.attack import Agent, agent_for_tests, empty_dir, workspace_for_tests
from tests.support.harness import Initd

JSON_REFERENCE = "https://containers.dev/implementors/json_reference/"
SPEC = "https://containers.dev/implementors/spec/"
SCHEMA = "https://github.com/devcontainers/spec/blob/main/schemas/devContainer.base.schema.json"

STAGES = ["onCreateCommand", "updateContentCommand", "postCreateCommand", "postStartCommand"]
WAIT_TICKS = 1200  # x 0.05 s: a deadline of about a minute on one event, far from both outcomes


# --- fixtures: one agent user for the module, a fresh workspace, record dir and session per test


@pytest.fixture(scope="module")
def agent() -> Iterator[Agent]:
    yield from agent_for_tests("these cases make a user and boot initd as root")


@pytest.fixture
def ws(agent: Agent) -> Iterator[Path]:
    # a new container for the next case: initd's memory of done stages lives in the
    # agent's state (~/.discobot), which this test run owns
    yield from workspace_for_tests(agent, forget_state=True)


@pytest.fixture
def rec(agent: Agent) -> Iterator[Path]:
    """Where the commands, hooks and the agent record what they saw (the agent's)."""
    path = Path(tempfile.mkdtemp(prefix="initd-dcspec-rec-"))
    os.chown(path, agent.uid, agent.gid)
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def sid() -> str:
    return f"dcspec-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def image() -> Iterator[str]:
    path = empty_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def boot(initd: Callable[..., Initd], agent: Agent, ws: Path, sid: str,
         image: str) -> Callable[..., Initd]:
    """``boot(*cmd)``: initd as PID 1 with ``--user`` the agent over ``ws``; ``verbose=False``
    boots it as an image would (quiet: only what is wrong is said); ``user=False`` without
    ``--user`` (the agent is root), ``more`` adds options, ``env`` replaces the environment."""
    def start(*cmd: str, verbose: bool = True, user: bool = True, more: tuple[str, ...] = (),
              env: dict[str, str] | None = None) -> Initd:
        args = [*(["-v"] if verbose else []), "--log-format", "json",
                *(["--user", agent.name] if user else []), "--workspace", str(ws),
                "--session-id", sid, "--hooks-dir", image, *more, "--", *cmd]
        return initd(args, **({"env": env} if env is not None else {}))
    return start


# --- helpers


def put(ws: Path, agent: Agent, rel: str, content: Any) -> Path:
    """Write a file of the workspace as its owner, the agent, would (directories too)."""
    directory = ws
    for part in Path(rel).parent.parts:
        directory = directory / part
        directory.mkdir(exist_ok=True)
        os.chown(directory, agent.uid, agent.gid)
    path = ws / rel
    path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2))
    os.chown(path, agent.uid, agent.gid)
    return path


def config(ws: Path, agent: Agent, body: dict[str, Any],
           rel: str = ".devcontainer/devcontainer.json") -> Path:
    return put(ws, agent, rel, body)


def wait_sh(path: Path) -> str:
    """Shell: wait until ``path`` exists; give up (exit 9) after about a minute."""
    p = shlex.quote(str(path))
    return (f"n=0; while [ ! -e {p} ]; do n=$((n+1)); if [ $n -gt {WAIT_TICKS} ]; then "
            f"echo 'gave up waiting for {path.name}' >&2; exit 9; fi; sleep 0.05; done")


def record(rec: Path, name: str) -> str:
    """Shell: append ``name`` to the order file and leave a marker named after it."""
    return f"echo {name} >> {rec}/order && touch {rec}/{name}"


def order(rec: Path) -> list[str]:
    path = rec / "order"
    return path.read_text().split() if path.exists() else []


def agent_sh(script: str) -> tuple[str, ...]:
    return ("sh", "-c", script)


def until(probe: Callable[[], object], timeout: float = 90) -> bool:
    """Poll an event; False once the deadline is past (the caller's assert says what)."""
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def said(init: Initd, *words: str) -> list[str]:
    """initd's log lines that name every one of ``words``."""
    return [line for line in init.stderr.splitlines() if all(w in line for w in words)]


# --- where a tool finds devcontainer.json
