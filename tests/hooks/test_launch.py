"""Running one hook now (initd/hooks/launch.py): its output logged, its result recorded in
status.json (or handed to a recorder), trust checked, a root hook only from root's copy
or as root; a hook initd will not run is a failed result, recorded, never a skip."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.hooks import launch
from initd.hooks.context import HookContext
from initd.hooks.context import Snapshot as RootCopy
from initd.hooks.model import Hook
from initd.hooks.trust import Trust
from tests.hooks.support import add_hook, forget_session, git_repo, hook_context


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[HookContext]:
    sid = f"launch-{uuid.uuid4().hex[:8]}"
    yield hook_context(git_repo(tmp_path / "ws"), sid)
    forget_session(sid)


def hook(ctx: HookContext, body: str, **fields: object) -> Hook:
    path = add_hook(Path(ctx.workspace) / ".discobot" / "hooks", "10-h.sh", body)
    made = Hook(id="h", name="10-h.sh", type="session", path=str(path),
                directory=str(path.parent), timeout=30.0)
    return made._replace(**fields)


def test_a_hook_runs_its_output_is_logged_its_result_recorded(ctx: HookContext) -> None:
    made = hook(ctx, 'echo "out $DISCOBOT_HOOK_TYPE $DISCOBOT_HOOK_FILE"; exit 3')
    result = launch.run_one(made, ctx, extra_env={"X": "1"})
    assert result.exit_code == 3 and not result.ok
    assert Path(result.output_path).read_text() == f"out session {made.path}\n"
    entry = ctx.store.read()["hooks"]["h"]
    assert (entry["lastResult"], entry["lastExitCode"]) == ("failure", 3)


def test_a_recorder_takes_the_result_instead(ctx: HookContext) -> None:
    taken: list[tuple[str, int | None]] = []
    launch.run_one(hook(ctx, "exit 0"), ctx,
                   recorder=lambda h, r: taken.append((h.id, r.exit_code)))
    assert taken == [("h", 0)] and "h" not in ctx.store.read()["hooks"]


def test_a_hook_not_approved_is_refused_and_recorded(ctx: HookContext) -> None:
    trust = Trust(str(Path(ctx.workspace).parent / "trust.json"), enforce=True)
    result = launch.run_one(hook(ctx, "touch ran"), ctx._replace(trust=trust))
    assert result.refused and not result.ok and "not trusted yet" in Path(
        result.output_path).read_text()
    assert not (Path(ctx.workspace) / "ran").exists()
    assert ctx.store.read()["hooks"]["h"]["lastResult"] == "failure"


def test_a_root_hook_runs_only_from_roots_copy(ctx: HookContext) -> None:
    made = hook(ctx, "echo the workspace's file, changed since", run_as="root")

    class Copies:
        def copy_of(self, given: Hook) -> RootCopy | str:
            copy = Path(ctx.workspace).parent / "copy.sh"
            copy.write_text("#!/bin/sh\necho the copy\n")
            copy.chmod(0o755)
            return RootCopy(given._replace(path=str(copy)), given.path, copy.read_bytes())

    result = launch.run_one(made, ctx._replace(snapshots=Copies()))
    assert Path(result.output_path).read_text() == "the copy\n"  # never the file now

    class Refusing:
        def copy_of(self, given: Hook) -> RootCopy | str:
            return "over root's copy limit"

    refused = launch.run_one(made, ctx._replace(snapshots=Refusing()))
    assert refused.refused and "over root's copy limit" in Path(
        refused.output_path).read_text()


def test_a_state_that_cannot_be_written_costs_the_record_not_the_hook(
        ctx: HookContext) -> None:
    sessions = Path(ctx.store.directory)
    sessions.parent.mkdir(parents=True, exist_ok=True)
    sessions.symlink_to("/nonexistent")  # the agent's state made a link
    result = launch.run_one(hook(ctx, "echo ran"), ctx)
    assert result.ok
