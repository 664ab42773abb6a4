"""The file hooks of the session's start, as the hook service runs them
(initd/service/started.py): discovered beside the guard snapshot (one the agent removed
still runs), and one the agent changed since is that hook's failure the model is told,
never its own check passing for it (invariant 15)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.events.guardset import take
from initd.hooks.context import HookContext
from initd.service import started
from tests.hooks.support import add_hook, forget_session, git_repo, hook_context, result


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[HookContext]:
    sid = f"started-{uuid.uuid4().hex[:8]}"
    yield hook_context(git_repo(tmp_path / "ws"), sid)
    forget_session(sid)


def test_a_file_hook_the_agent_removed_still_runs(ctx: HookContext) -> None:
    hooks = Path(ctx.workspace) / ".discobot" / "hooks"
    add_hook(hooks, "10-fmt.sh", "exit 0", type="file", pattern="*.py")
    add_hook(hooks, "20-setup.sh", "exit 0", type="session")
    guards = take(ctx.workspace, ctx.agent.home)
    (hooks / "10-fmt.sh").unlink()
    add_hook(hooks, "30-new.sh", "exit 0", type="file", pattern="*.md")
    found = started.discover(ctx.workspace, str(Path(ctx.workspace) / "no-image"), guards)
    assert [h.name for h in found.hooks] == ["10-fmt.sh", "20-setup.sh", "30-new.sh"]


def test_a_hook_changed_since_is_a_failure_the_model_is_told(ctx: HookContext) -> None:
    hooks = Path(ctx.workspace) / ".discobot" / "hooks"
    path = add_hook(hooks, "10-fmt.sh", "exit 1", type="file", pattern="*.py")
    guards = take(ctx.workspace, ctx.agent.home)
    found = started.discover(ctx.workspace, str(Path(ctx.workspace) / "no-image"), guards)
    [fmt] = found.hooks
    assert started.changed(fmt, guards) is None
    ran: list[str] = []
    gate = started.checked(None, guards, ctx)
    assert gate(fmt, lambda: ran.append("ran") or result(1)).exit_code == 1
    path.write_text(path.read_text().replace("exit 1", "exit 0"))  # the agent "fixes" it
    assert "changed since the session started" in str(started.changed(fmt, guards))
    refused = gate(fmt, lambda: ran.append("again") or result(0))
    assert not refused.ok and not refused.refused  # fixable: the model is told
    assert ran == ["ran"]
    assert started.changed(fmt._replace(type="session"), guards) is None
