"""File-hook evaluation at the end of a turn (evaluateFileHooks in discobot's hooks spec), on
real repos."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from initd.hooks import context, discovery, filehooks, message
from initd.hooks.model import Hook
from tests.hooks.support import (
    add_hook,
    checker,
    forget_session,
    git_ok,
    git_repo,
    hook_context,
    settle,
)
from tests.support.harness import wait_for


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = git_repo(tmp_path / "ws")
    (path / "README").write_text("hello\n")
    git_ok(path, "add", "README")
    git_ok(path, "commit", "-qm", "init")
    return path


@pytest.fixture
def ctx(repo: Path) -> Iterator[context.HookContext]:
    sid = f"fh-{uuid.uuid4().hex[:8]}"
    yield hook_context(repo, sid)
    forget_session(sid)


def hooks_of(repo: Path) -> tuple[Hook, ...]:
    return discovery.for_workspace(str(repo), str(repo / "no-image")).hooks


def test_the_specs_example_a_fails_b_stays_pending_then_both_pass(repo: Path, ctx) -> None:
    checker(repo, "10-a.sh", "*.a", "BAD", name="Hook-A")
    checker(repo, "20-b.sh", "*.b", "BAD", name="Hook-B")
    (repo / "x.a").write_text("BAD\n")
    (repo / "y.b").write_text("fine\n")
    first = filehooks.evaluate(hooks_of(repo), ctx)
    assert first.action == filehooks.Action.REPROMPT
    assert [r.hook.id for r in first.ran] == ["10-a"]
    assert first.pending == ("10-a", "20-b")  # B stays pending behind A
    assert first.failed is not None and first.failed.files == ("x.a",)
    (repo / "x.a").write_text("fixed\n")  # the agent fixes A
    second = filehooks.evaluate(hooks_of(repo), ctx)
    assert second.action == filehooks.Action.NONE
    assert [r.hook.id for r in second.ran] == ["10-a", "20-b"]
    assert second.pending == ()
    status = ctx.store.read()
    assert status["hooks"]["10-a"]["runCount"] == 2 and status["hooks"]["20-b"]["runCount"] == 1


def test_nothing_changed_nothing_runs(repo: Path, ctx) -> None:
    checker(repo, "10-a.sh", "*.a", "BAD")
    assert filehooks.evaluate(hooks_of(repo), ctx) == filehooks.Evaluation("none", (), ())


def test_only_changes_since_the_marker_mark_hooks(repo: Path, ctx) -> None:
    checker(repo, "10-a.sh", "*.a", "BAD")
    (repo / "x.a").write_text("fine\n")
    settle()
    assert [r.hook.id for r in filehooks.evaluate(hooks_of(repo), ctx).ran] == ["10-a"]
    # x.a is still dirty but unchanged since: no hook is marked again
    assert filehooks.evaluate(hooks_of(repo), ctx).ran == ()
    (repo / "x.a").write_text("edited\n")
    settle()
    assert [r.hook.id for r in filehooks.evaluate(hooks_of(repo), ctx).ran] == ["10-a"]


def test_edits_made_while_hooks_run_count_next_time(repo: Path, ctx) -> None:
    """The marker is the evaluation's start: an auto-fixer's rewrite is a change next time."""
    add_hook(repo / ".discobot" / "hooks", "10-fix.sh", "sleep 0.05; echo fixed > y.b",
             type="file", pattern="*.a")
    checker(repo, "20-b.sh", "*.b", "BAD")
    (repo / "x.a").write_text("1\n")
    settle()
    first = filehooks.evaluate(hooks_of(repo), ctx)
    assert [r.hook.id for r in first.ran] == ["10-fix"]
    settle()
    second = filehooks.evaluate(hooks_of(repo), ctx)
    assert [r.hook.id for r in second.ran] == ["20-b"]  # y.b, written during the first


def test_notify_llm_false_stops_without_a_reprompt(repo: Path, ctx) -> None:
    checker(repo, "10-a.sh", "*.a", "BAD", notify_llm=False)
    checker(repo, "20-b.sh", "*.a", "NEVER")
    (repo / "x.a").write_text("BAD\n")
    result = filehooks.evaluate(hooks_of(repo), ctx)
    assert result.action == filehooks.Action.STOPPED
    assert result.pending == ("10-a", "20-b")


def test_a_pending_hook_with_no_matching_dirty_file_is_dropped(repo: Path, ctx) -> None:
    checker(repo, "10-a.sh", "*.a", "BAD")
    (repo / "x.a").write_text("BAD\n")
    assert filehooks.evaluate(hooks_of(repo), ctx).pending == ("10-a",)
    (repo / "x.a").unlink()  # the change is gone altogether
    result = filehooks.evaluate(hooks_of(repo), ctx)
    assert (result.action, result.ran, result.pending) == ("none", (), ())


def test_hook_inputs_env_nul_list_and_json_stdin_with_odd_names(repo: Path, ctx,
                                                                tmp_path: Path) -> None:
    names = ["a b.txt", 'q"uote.txt', "new\nline.txt", "$(touch CANARY).txt", "`touch C2`.txt"]
    for name in names:
        (repo / name).write_text("x\n")
    dump = tmp_path / "dump"
    add_hook(repo / ".discobot" / "hooks", "10-dump.sh",
             f'cat > {dump}.json; cp "$DISCOBOT_CHANGED_FILES_LIST" {dump}.nul; '
             f'printf %s "$DISCOBOT_CHANGED_FILES" > {dump}.env; echo "$DISCOBOT_HOOK_TYPE"',
             type="file", pattern="*.txt")
    result = filehooks.evaluate(hooks_of(repo), ctx)
    assert result.action == "none", result.ran[0].result.output()
    assert sorted(json.loads(Path(f"{dump}.json").read_text())["files"]) == sorted(names)
    listed = Path(f"{dump}.nul").read_bytes().split(b"\0")[:-1]
    assert sorted(p.decode() for p in listed) == sorted(names)
    assert Path(f"{dump}.env").read_text() == " ".join(sorted(names))
    assert result.ran[0].result.head == b"file\n"
    assert not list(repo.rglob("CANARY")) and not list(repo.rglob("C2"))


def test_deleted_files_and_a_repository_without_head(tmp_path: Path, ctx, repo: Path) -> None:
    checker(repo, "10-a.sh", "*.md", "BAD")
    (repo / "gone.md").write_text("x\n")
    git_ok(repo, "add", "gone.md")
    git_ok(repo, "commit", "-qm", "add")
    filehooks.evaluate(hooks_of(repo), ctx)  # marker set
    time.sleep(0.05)
    (repo / "gone.md").unlink()
    result = filehooks.evaluate(hooks_of(repo), ctx)
    assert result.ran and result.ran[0].files == ("gone.md",)  # deleted files are passed on


def test_no_head_yet(tmp_path: Path) -> None:
    ws = git_repo(tmp_path / "fresh", identity=False)
    checker(ws, "10-a.sh", "*.a", "BAD")
    (ws / "x.a").write_text("BAD\n")
    sid = f"fh-{uuid.uuid4().hex[:8]}"
    try:
        result = filehooks.evaluate(hooks_of(ws), hook_context(ws, sid))
        assert result.action == filehooks.Action.REPROMPT and result.failed.files == ("x.a",)
    finally:
        forget_session(sid)


def test_cancel_stops_the_hook_group_and_keeps_it_pending(repo: Path, ctx,
                                                          tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    add_hook(repo / ".discobot" / "hooks", "10-slow.sh",
             f"echo $$ > {pidfile}; sleep 1000 & wait", type="file", pattern="*.a")
    (repo / "x.a").write_text("1\n")
    cancel = threading.Event()
    done: list[filehooks.Evaluation] = []
    worker = threading.Thread(target=lambda: done.append(
        filehooks.evaluate(hooks_of(repo), ctx, cancel=cancel)), daemon=True)
    worker.start()
    # cancelled while it runs (its sleep up), not before it started
    wait_for(lambda: pidfile.exists() and pidfile.read_text().endswith("\n"),
             what="the hook started")
    leader = int(pidfile.read_text())

    def group() -> list[psutil.Process]:
        return [p for p in psutil.process_iter(["pid"]) if _pgid(p.pid) == leader
                and p.status() != psutil.STATUS_ZOMBIE]
    wait_for(lambda: len(group()) == 2, what="the hook's sleep")
    cancel.set()
    # The hook sleeps 1000 s (timeout 900): an evaluation that returns at all, by this
    # deadline, was ended by the cancel.
    worker.join(30)
    if not done:
        os.killpg(leader, signal.SIGKILL)
        pytest.fail("the evaluation went on after the cancel")
    [result] = done
    assert result.action == filehooks.Action.CANCELLED
    assert result.pending == ("10-slow",)
    assert group() == []


def test_the_reprompt_message_for_a_failure(repo: Path, ctx) -> None:
    checker(repo, "10-a.sh", "*.go", "BAD", name="Go format check")
    (repo / "cmd").mkdir()
    (repo / "cmd" / "main.go").write_text("BAD\n")
    failed = filehooks.evaluate(hooks_of(repo), ctx).failed
    assert failed is not None
    text = message.failure(failed.hook, failed.files, failed.result, 1, 3)
    assert text.splitlines() == [
        '[Discobot Hook Failed] "Go format check" (pattern: *.go)', "",
        "Files: cmd/main.go", "Exit code: 1", "", "Output:", "cmd/main.go: has BAD", "",
        "Please fix the issues and ensure the hook passes. (Attempt 1/3)"]


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


