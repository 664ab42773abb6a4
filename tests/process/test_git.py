"""initd/process/git.py: a git call stops at once when it is cancelled (boot's stop signal), in
its own process group. A FIFO where git reads its config (the agent can plant one in
``.git/config`` or its ``~/.gitconfig``) once held boot, and so the stop, for each call's
whole 30 s timeout."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import psutil

from initd.process import git
from tests.support.harness import wait_for


def _git_children() -> list[psutil.Process]:
    return [p for p in psutil.Process().children() if p.name() == "git"]


def test_a_git_waiting_on_a_fifo_stops_when_cancelled(tmp_path: Path) -> None:
    fifo = tmp_path / "config"
    os.mkfifo(fifo)
    cancel = threading.Event()
    groups: list[tuple[int, int]] = []  # (pid, process group) of each git seen

    def cancel_once_git_waits() -> None:
        for process in wait_for(_git_children, timeout=30, what="git, waiting on the FIFO"):
            groups.append((process.pid, os.getpgid(process.pid)))
        cancel.set()

    threading.Thread(target=cancel_once_git_waits, daemon=True).start()
    # (not cancelled: this waits out its timeout, then raises TimeoutExpired)
    ran = git.run(["config", "--file", str(fifo), "--get", "user.name"], timeout=45,
                  cancel=cancel)
    assert ran.cancelled and ran.returncode < 0
    assert groups and all(pid == group for pid, group in groups)  # a group of its own
    assert not _git_children()  # stopped and reaped


def test_a_call_cancelled_before_it_starts_runs_no_git(tmp_path: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    ran = git.run(["init", str(tmp_path / "never")], cancel=cancel)
    assert ran.cancelled
    assert not (tmp_path / "never").exists()


def test_an_uncancelled_call_is_an_ordinary_result(tmp_path: Path) -> None:
    ran = git.run(["init", "-q", str(tmp_path / "repo")], timeout=60,
                  cancel=threading.Event())
    assert (ran.cancelled, ran.returncode) == (False, 0)
    assert (tmp_path / "repo" / ".git").is_dir()
