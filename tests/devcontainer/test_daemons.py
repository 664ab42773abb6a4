"""What devcontainer.json's commands leave running (initd/devcontainer/daemons.py): the
sessions they ran in, from root's memory, stopped together at the end (TERM, grace,
KILL), only the commands' user's processes; a daemon's output read on (test_boot.py
through a real boot, the drain: tests/hooks/test_drain.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from initd.devcontainer.daemons import Keeper
from initd.hooks.context import HookContext
from tests.hooks.support import forget_session, git_repo, hook_context


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[HookContext]:
    sid = f"keeper-{uuid.uuid4().hex[:8]}"
    yield hook_context(git_repo(tmp_path / "ws"), sid)
    forget_session(sid)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in "ZX"


def test_every_session_stopped_at_once_even_what_ignores_term(ctx: HookContext) -> None:
    keeper = Keeper(ctx, os.getuid())
    leaders = [subprocess.Popen(["sh", "-c", "trap '' TERM; sleep 3600 & sleep 3600; wait"],
                                start_new_session=True) for _ in range(2)]
    try:
        for leader in leaders:
            keeper.started(SimpleNamespace(pid=leader.pid))  # type: ignore[arg-type]
        stopped = keeper.stop(0.2)
        for leader in leaders:
            leader.wait(60)
        assert stopped >= 2 and not any(alive(leader.pid) for leader in leaders)
    finally:
        for leader in leaders:
            if leader.poll() is None:
                os.killpg(leader.pid, signal.SIGKILL)
                leader.wait()
    keeper.close()  # nothing to read: returns at once


def test_another_users_process_in_a_session_is_not_stopped(ctx: HookContext) -> None:
    keeper = Keeper(ctx, os.getuid() + 1)  # the commands ran as someone else
    leader = subprocess.Popen(["sleep", "3600"], start_new_session=True)
    try:
        keeper.started(SimpleNamespace(pid=leader.pid))  # type: ignore[arg-type]
        assert keeper.stop(0.1) == 0 and leader.poll() is None
    finally:
        leader.kill()
        leader.wait()
