"""Hooks a process left ``running`` when it died (initd/hooks/recovery.py): recorded as
failed; the group a dead runner left stopped only by a process of the tree's own user;
a runner that lives (its pid and start time) left alone; what the agent wrote there
never stops the recovery, nor what runs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from initd.config import log
from initd.hooks import recovery
from initd.hooks.model import Hook
from initd.hooks.status.store import StatusStore
from initd.process import spawn


def hook(ident: str) -> Hook:
    return Hook(id=ident, name=ident, type="session", path="/x", directory="/")


def test_whose_runner_is_gone() -> None:
    me = os.getpid()
    assert not recovery.runner_gone({"runner": me, "runnerStart": spawn.start_ticks(me)})
    assert recovery.runner_gone({"runner": me, "runnerStart": -1})  # a pid used again
    assert not recovery.runner_gone({"runner": me})  # (no start time: the pid says)
    for forged in (None, 0, -1, True, "1", 2**22 + 7):
        assert recovery.runner_gone({"runner": forged, "runnerStart": 1})
    assert recovery.any_runner({})


def test_a_dead_runners_hook_is_failed_and_its_group_stopped(tmp_path: Path) -> None:
    store = StatusStore(str(tmp_path))
    leftover = subprocess.Popen(["sleep", "3600"], start_new_session=True)
    try:
        store.started(hook("setup"), pgid=leftover.pid)
        assert recovery.recover_interrupted(store, recovery.any_runner, 1.0,
                                            log.get()) == ["setup"]
        assert leftover.wait(60) is not None  # its group was stopped
        assert store.read()["hooks"]["setup"]["lastResult"] == "failure"
    finally:
        leftover.kill()
        leftover.wait()


def test_a_living_runners_hook_is_left_running(tmp_path: Path) -> None:
    store = StatusStore(str(tmp_path))
    store.started(hook("mine"))
    assert recovery.recover_interrupted(store, recovery.runner_gone, 1.0, log.get()) == []
    assert store.read()["hooks"]["mine"]["lastResult"] == "running"


def test_a_group_the_file_names_on_a_guess_is_never_signalled(tmp_path: Path) -> None:
    """status.json is the agent's to write: a group whose leader is not the one recorded
    (a pid used again, a forged start time), or group 1 (kill(-1): everything), is left
    alone; the hook is still recorded as failed."""
    store = StatusStore(str(tmp_path))
    bystander = subprocess.Popen(["sleep", "3600"], start_new_session=True)
    try:
        store.started(hook("forged"), pgid=bystander.pid)
        store.started(hook("one"), pgid=1)
        store.update(lambda s: s["hooks"]["forged"].update(pgidStart=1))
        assert sorted(recovery.recover_interrupted(store, recovery.any_runner, 0.1,
                                                   log.get())) == ["forged", "one"]
        assert bystander.poll() is None  # alive
    finally:
        bystander.kill()
        bystander.wait()
