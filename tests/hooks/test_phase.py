"""Boot's session phase (initd/hooks/phase.py): session hooks in the order given, a
failure a result and boot goes on, every result written before the phase returns,
``blocking: false`` ones in the background, a stop skipping the rest. Through a real
boot as PID 1: tests/hooks/test_session.py."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.hooks import phase
from initd.hooks.context import HookContext
from initd.hooks.model import Hook
from tests.hooks.support import add_hook, forget_session, git_repo, hook_context, result
from tests.support.harness import wait_for


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[HookContext]:
    sid = f"phase-{uuid.uuid4().hex[:8]}"
    yield hook_context(git_repo(tmp_path / "ws"), sid)
    forget_session(sid)


def hook(ctx: HookContext, name: str, body: str, **fields: object) -> Hook:
    path = add_hook(Path(ctx.workspace) / ".discobot" / "hooks", name, body)
    made = Hook(id=name, name=name, type="session", path=str(path),
                directory=str(path.parent), timeout=30.0)
    return made._replace(**fields)


def test_in_order_a_failure_goes_on_and_every_result_is_written(ctx: HookContext) -> None:
    log = Path(ctx.workspace) / "log"
    hooks = [hook(ctx, "10-a", f"echo a >> {log}"),
             hook(ctx, "20-b", f"echo b >> {log}; exit 1"),
             hook(ctx, "25-file", f"echo no >> {log}", type="file"),  # not a session hook
             hook(ctx, "30-c", f"echo c >> {log}")]
    assert phase.run_session_hooks(hooks, ctx) is None  # nothing in the background
    assert log.read_text() == "a\nb\nc\n"
    status = ctx.store.read()["hooks"]
    assert [status[h]["lastResult"] for h in ("10-a", "20-b", "30-c")] == [
        "success", "failure", "success"]  # all written by the time it returned


def test_background_hooks_after_and_stopped_at_shutdown(ctx: HookContext) -> None:
    flag = Path(ctx.workspace) / "blocking-done"
    hooks = [hook(ctx, "10-bg", "sleep 3600", blocking=False, timeout=3600.0),
             hook(ctx, "20-fg", f"touch {flag}")]
    background = phase.run_session_hooks(hooks, ctx)
    assert background is not None and flag.exists()
    wait_for(lambda: ctx.store.read()["hooks"].get("10-bg", {}).get("lastResult")
             == "running", what="the background hook running")
    background.stop()
    assert ctx.store.read()["hooks"]["10-bg"]["lastResult"] == "failure"


def test_a_stop_skips_the_rest_and_starts_nothing_in_the_background(ctx: HookContext
                                                                    ) -> None:
    cancel = threading.Event()
    cancel.set()
    ran = Path(ctx.workspace) / "ran"
    hooks = [hook(ctx, "10-a", f"touch {ran}"), hook(ctx, "20-bg", "true", blocking=False)]
    assert phase.run_session_hooks(hooks, ctx, cancel) is None
    assert not ran.exists()


def test_the_recorder_writes_in_order_before_close_returns(ctx: HookContext) -> None:
    recorder = phase.Recorder(ctx)
    made = [hook(ctx, f"{n}-h", "true") for n in range(10, 15)]
    for n, each in enumerate(made):
        recorder.submit(each, result(n % 2))
    recorder.close()
    status = ctx.store.read()["hooks"]
    assert [status[h.id]["lastExitCode"] for h in made] == [0, 1, 0, 1, 0]
