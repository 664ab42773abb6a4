"""What running a hook needs besides the hook (initd/hooks/context.py): the context made
from the settings, state kept in memory when the disk cannot have it (said how to fix),
who a hook runs as, and its environment (containerEnv only for the agent's hooks, never a
secret, initd's own variables last)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from initd.config import log
from initd.hooks import context
from initd.hooks.model import Hook
from initd.hooks.status.memory import MemoryStore
from initd.process import limits, users
from tests.hooks.support import forget_session


@pytest.fixture
def sid() -> Iterator[str]:
    made = f"ctx-{uuid.uuid4().hex[:8]}"
    yield made
    forget_session(made)


def options(tmp_path: Path, **more: object) -> SimpleNamespace:
    """What context.make reads of the settings (its Options protocol)."""
    return SimpleNamespace(**{"workspace": str(tmp_path), "state_dir": None, "session_id": None,
                              "secret": ("TOKEN",), "grace": 2.0, "trust": False,
                              "trust_file": str(tmp_path / "trust.json"),
                              "hooks_dir": "/etc/initd/hooks.d", "hook_limits": limits.NONE,
                              **more})


def hook(run_as: str = "user") -> Hook:
    return Hook(id="h", name="h.sh", type="session", path="/x", directory="/", run_as=run_as)


def test_a_context_of_the_settings(tmp_path: Path, sid: str) -> None:
    ctx = context.make(options(tmp_path, trust=True), None, log.get(), sid)  # type: ignore[arg-type]
    assert (ctx.workspace, ctx.session_id, ctx.secrets, ctx.grace) == (
        str(tmp_path), sid, ("TOKEN",), 2.0)
    assert ctx.agent == users.current() and ctx.trust is not None and ctx.trust.enforce
    assert ctx.state.path == os.path.join(ctx.agent.home, ".discobot")
    assert ctx.state_problem is None


def test_a_session_id_is_given_or_made() -> None:
    assert context.session_id("given", log.get()) == "given"
    made = context.session_id(None, log.get())
    assert len(made) == 12 and made != context.session_id(None, log.get())


def test_state_that_cannot_be_written_is_kept_in_memory_and_said(tmp_path: Path,
                                                                 sid: str) -> None:
    blocker = tmp_path / "state"
    blocker.write_text("a file where the state directory should be")
    ctx = context.make(options(tmp_path, state_dir=str(blocker)), None, log.get(), sid,  # type: ignore[arg-type]
                       prepare=True)
    assert isinstance(ctx.store, MemoryStore)
    assert ctx.state_problem is not None and "--state-dir/INITD_STATE_DIR" in ctx.state_problem


def test_prepared_state_has_its_directories(tmp_path: Path, sid: str) -> None:
    ctx = context.make(options(tmp_path, state_dir=str(tmp_path / "state")), None, log.get(),  # type: ignore[arg-type]
                       sid, prepare=True)
    assert ctx.state_problem is None
    for made in ("sessions", f"{sid}/events"):
        assert (tmp_path / "state" / made).is_dir()
    assert not list((tmp_path / "state").rglob(".initd-probe"))


def test_who_a_hook_runs_as() -> None:
    agent = users.Account("agent", 12345, 12345, (), "/home/agent", "/bin/sh")
    ctx = SimpleNamespace(agent=agent)
    assert context.account_for(hook("user"), ctx) == agent  # type: ignore[arg-type]
    assert context.account_for(hook("root"), ctx) == users.current()  # type: ignore[arg-type]


def test_a_hooks_environment(tmp_path: Path, sid: str, monkeypatch: pytest.MonkeyPatch
                             ) -> None:
    monkeypatch.setenv("TOKEN", "secret")
    ctx = context.make(options(tmp_path), None, log.get(), sid)._replace(  # type: ignore[arg-type]
        container_env=(("FROM_CONTAINER", "1"), ("DISCOBOT_SESSION_ID", "forged")))
    env = context.environment(hook("user"), ctx, {"EXTRA": "e"})
    assert "TOKEN" not in env and env["FROM_CONTAINER"] == "1" and env["EXTRA"] == "e"
    assert (env["DISCOBOT_SESSION_ID"], env["DISCOBOT_WORKSPACE"],
            env["DISCOBOT_HOOK_TYPE"]) == (sid, str(tmp_path), "session")  # initd's win
    assert "FROM_CONTAINER" not in context.environment(hook("root"), ctx)  # never root's
