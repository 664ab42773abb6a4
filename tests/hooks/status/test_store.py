"""status.json (initd/hooks/status/store.py): crash-safe writes, no lost updates between
writers, recovery of 'running'."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from initd.hooks.model import Hook
from initd.hooks.status.schema import VERSION
from initd.hooks.status.store import StatusStore
from initd.process import spawn
from initd.state import statefile
from tests.support.harness import wait_for

BUMP = """
import sys
from initd.hooks.status.store import StatusStore
store = StatusStore(sys.argv[1])
def bump(status):
    entry = status["hooks"].setdefault("counter", {"runCount": 0})
    entry["runCount"] += 1
for _ in range(int(sys.argv[2])):
    store.update(bump)
"""


def hook(kind: str = "session", ident: str = "setup") -> Hook:
    return Hook(id=ident, name=ident.title(), type=kind, path="/x", directory="/")


def test_missing_file_reads_as_empty_versioned_status(tmp_path: Path) -> None:
    status = StatusStore(str(tmp_path / "hooks")).read()
    assert status == {"version": VERSION, "hooks": {}, "pendingHooks": [],
                      "lastEvaluatedAt": None}


def test_corrupt_file_is_kept_aside_and_reads_as_empty(tmp_path: Path) -> None:
    store = StatusStore(str(tmp_path))
    Path(store.path).write_text("{not json")
    assert store.read()["hooks"] == {}
    assert Path(store.path + ".corrupt").read_text() == "{not json"


@pytest.mark.slow
def test_concurrent_writers_lose_no_update(tmp_path: Path) -> None:
    """Read-modify-write under flock: 4 processes x 100 increments = 400."""
    directory = str(tmp_path / "hooks")
    writers = [subprocess.Popen([sys.executable, "-c", BUMP, directory, "100"])
               for _ in range(4)]
    assert [w.wait(60) for w in writers] == [0] * 4
    assert StatusStore(directory).read()["hooks"]["counter"]["runCount"] == 400


@pytest.mark.slow
def test_kill_9_mid_write_never_leaves_a_torn_file(tmp_path: Path) -> None:
    directory = str(tmp_path / "hooks")
    store = StatusStore(directory)

    def runs() -> int:
        try:
            with open(store.path) as f:
                return int(json.load(f)["hooks"]["counter"]["runCount"])  # (torn: raises)
        except FileNotFoundError:
            return 0

    for _ in range(10):
        before = runs()
        writer = subprocess.Popen([sys.executable, "-c", BUMP, directory, "100000"])
        # killed while it writes: once it has written at least once more, whenever
        wait_for(lambda before=before: runs() > before, timeout=60,
                 what="the writer writing")
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        with open(store.path) as f:
            data = json.load(f)  # always whole: old or new, never half
        assert data["version"] == VERSION


def test_run_counters(tmp_path: Path) -> None:
    from tests.hooks.support import result

    store = StatusStore(str(tmp_path))
    store.started(hook())
    assert store.read()["hooks"]["setup"]["lastResult"] == "running"
    store.finished(hook(), result(1))
    store.finished(hook(), result(1))
    entry = store.finished(hook(), result(0))["hooks"]["setup"]
    assert (entry["runCount"], entry["failCount"], entry["consecutiveFailures"]) == (3, 2, 0)
    assert entry["lastResult"] == "success"
    assert entry["hookName"] == "Setup" and entry["type"] == "session"


def test_recover_marks_running_failed_and_requeues_file_hooks(tmp_path: Path) -> None:
    store = StatusStore(str(tmp_path))
    store.started(hook("session", "setup"))
    store.started(hook("file", "fmt"))
    assert sorted(entry["hookId"] for entry in store.recover()) == ["fmt", "setup"]
    status = store.read()
    for ident in ("fmt", "setup"):
        entry = status["hooks"][ident]
        assert (entry["lastResult"], entry["interrupted"]) == ("failure", True)
        assert "runner" not in entry and "pgid" not in entry  # only while it runs
    assert status["pendingHooks"] == ["fmt"]
    assert store.recover() == []  # once


def test_an_interrupted_run_counts_and_the_next_run_clears_the_mark(tmp_path: Path) -> None:
    from tests.hooks.support import result

    store = StatusStore(str(tmp_path))
    store.started(hook("session", "setup"))
    store.recover()
    entry = store.read()["hooks"]["setup"]
    assert (entry["runCount"], entry["failCount"], entry["interrupted"]) == (1, 1, True)
    entry = store.finished(hook("session", "setup"), result(0))["hooks"]["setup"]
    assert (entry["runCount"], entry["failCount"], entry["lastResult"]) == (2, 1, "success")
    assert "interrupted" not in entry  # that was the run before


def test_recover_takes_only_the_hooks_of_a_runner_that_died(tmp_path: Path) -> None:
    store = StatusStore(str(tmp_path))
    store.started(hook("file", "mine"), pgid=os.getpid())
    entry = store.read()["hooks"]["mine"]
    assert (entry["runner"], entry["pgid"]) == (os.getpid(), os.getpid())
    assert entry["pgidStart"] == spawn.start_ticks(os.getpid())  # who the group's leader is
    assert store.recover(runner_gone=lambda entry: entry["runner"] != os.getpid()) == []
    assert store.read()["hooks"]["mine"]["lastResult"] == "running"
    [gone] = store.recover(runner_gone=lambda entry: entry["runner"] == os.getpid())
    assert (gone["hookId"], gone["pgid"]) == ("mine", os.getpid())


def test_tree_is_owned_by_the_agent(tmp_path: Path) -> None:
    store = StatusStore.for_session(statefile.root(str(tmp_path), None, (65534, 65534)), "sid")
    store.prepare()  # what boot does first
    store.started(hook())
    for path in (tmp_path / ".discobot", tmp_path / ".discobot" / "sid",
                 Path(store.directory), Path(store.output_dir), Path(store.path)):
        assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534), path
