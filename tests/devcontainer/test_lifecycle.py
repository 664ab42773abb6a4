"""One boot's devcontainer.json commands (initd/devcontainer/lifecycle.py), run by the
phase itself: the waited stages in order now, the later ones in the background (the
attach stage once the agent is up), a failed stage stopping the later ones, the
once-per-container stages not run again, a stage not approved refused, and what the
commands left running stopped at the end. Through a real boot: test_boot.py."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from initd.devcontainer import lifecycle
from initd.devcontainer.config import parse
from initd.hooks.context import HookContext
from initd.hooks.trust import Trust
from tests.hooks.support import forget_session, git_repo, hook_context
from tests.support.harness import wait_for


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[HookContext]:
    sid = f"dc-{uuid.uuid4().hex[:8]}"
    yield hook_context(git_repo(tmp_path / "ws"), sid)._replace(grace=1.0)
    forget_session(sid)


def phase(ctx: HookContext, data: dict[str, Any]) -> lifecycle.Lifecycle:
    path = f"{ctx.workspace}/.devcontainer/devcontainer.json"
    made = lifecycle.prepare(parse(data, path, ctx.workspace), ctx)
    assert made is not None
    return made


def log(ctx: HookContext) -> list[str]:
    path = Path(ctx.workspace) / "log"
    return path.read_text().split() if path.exists() else []


def test_the_waited_stages_now_in_order_the_rest_after(ctx: HookContext) -> None:
    run = phase(ctx, {"onCreateCommand": "echo create >> log",
                      "updateContentCommand": ["sh", "-c", "echo update >> log"],
                      "postCreateCommand": {"a": "echo post-a >> log"},
                      "postStartCommand": "echo start >> log",
                      "postAttachCommand": "echo attach >> log"})
    run.run_waited(None)
    assert log(ctx) == ["create", "update"]  # waitFor: updateContentCommand
    run.start_background()
    wait_for(lambda: log(ctx)[-1:] == ["start"], what="the later stages")
    assert "attach" not in log(ctx)  # for after the agent is up
    run.attach()
    wait_for(lambda: log(ctx)[-1:] == ["attach"], what="postAttachCommand")
    run.stop()
    assert log(ctx) == ["create", "update", "post-a", "start", "attach"]


def test_a_failed_stage_stops_the_later_ones(ctx: HookContext) -> None:
    run = phase(ctx, {"onCreateCommand": "exit 3", "updateContentCommand": "echo u >> log",
                      "waitFor": "postStartCommand", "postStartCommand": "echo s >> log"})
    run.run_waited(None)
    run.stop()
    assert run.failed == "onCreateCommand" and log(ctx) == []


def test_once_per_container_stages_are_not_run_again(ctx: HookContext) -> None:
    data = {"onCreateCommand": "echo create >> log", "postStartCommand": "echo start >> log",
            "waitFor": "postStartCommand"}
    for _ in range(2):  # two boots of one container
        run = phase(ctx, data)
        run.run_waited(None)
        run.stop()
    assert log(ctx) == ["create", "start", "start"]


def test_a_stage_not_approved_is_refused(ctx: HookContext, tmp_path: Path) -> None:
    trust = Trust(str(tmp_path / "trust.json"), enforce=True)
    run = phase(ctx._replace(trust=trust), {"onCreateCommand": "echo ran >> log"})
    run.run_waited(None)
    run.stop()
    assert log(ctx) == [] and run.failed == "onCreateCommand"


def test_what_the_commands_left_running_is_stopped(ctx: HookContext) -> None:
    run = phase(ctx, {"onCreateCommand": "nohup sleep 3600 >/dev/null 2>&1 & "
                                         "echo $! > pid"})
    run.run_waited(None)
    pid = int((Path(ctx.workspace) / "pid").read_text())
    assert alive(pid)  # still running after its command ended
    run.stop()
    assert not alive(pid)


def alive(pid: int) -> bool:
    """Running (a zombie, awaiting whoever reaps it, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in "ZX"


def test_a_file_with_errors_runs_nothing(ctx: HookContext) -> None:
    path = f"{ctx.workspace}/.devcontainer/devcontainer.json"
    assert lifecycle.prepare(parse({"onCreateCommand": 5}, path, ctx.workspace), ctx) is None
