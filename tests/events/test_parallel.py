"""Claude Code's matching hooks of one event, run together (initd/events/parallel.py):
results in load order whatever order they finish in, each step run at most once per
request (fired before any starts, recorded once all are done), and a failure of
initd's the hook's error, never a pass."""

from __future__ import annotations

from pathlib import Path

from initd.events import parallel
from initd.events.actions import Status
from initd.events.model import Shell
from initd.state.agentfs import Place
from initd.state.journal import Journal
from tests.support.calls import call


def test_together_and_in_load_order(tmp_path: Path) -> None:
    """The first waits for a file the second writes: run one after the other, the first
    would never see it (and time out); together, both finish, in load order."""
    flag = tmp_path / "second-ran"
    first = call(Shell(f"while [ ! -e {flag} ]; do sleep 0.01; done; echo first"),
                 hook_fields={"key": "a", "timeout": 60.0}, workspace=str(tmp_path))
    second = call(Shell(f"touch {flag}; echo second; exit 2"), hook_fields={"key": "b"},
                  workspace=str(tmp_path))
    results = parallel.run([("a", first), ("b", second)], None)
    assert [(r.stdout, r.exit_code) for r in results] == [("first\n", 0), ("second\n", 2)]


def test_each_step_once_per_request(tmp_path: Path) -> None:
    journal = Journal(Place(str(tmp_path), ("journal",)))
    count = tmp_path / "count"
    step = call(Shell(f"echo x >> {count}"), workspace=str(tmp_path))
    with journal.entry("event", "k") as entry:
        assert entry is not None
        [done] = parallel.run([("h", step)], entry)
        assert done.status == Status.OK
    with journal.entry("event", "k") as again:  # sent again: replayed, not run
        [replayed] = parallel.run([("h", step)], again)
    assert count.read_text() == "x\n" and replayed.status == Status.OK


def test_a_step_fired_but_never_recorded_fails_closed(tmp_path: Path) -> None:
    journal = Journal(Place(str(tmp_path), ("journal",)))
    with journal.entry("event", "k") as entry:
        assert entry is not None
        entry.fire("h")  # killed before its result was recorded
    with journal.entry("event", "k") as again:
        [result] = parallel.run([("h", call(Shell("true")))], again)
    assert result.status == Status.ERROR and result.fails_closed


def test_a_bug_of_initds_is_the_guards_error(tmp_path: Path) -> None:
    broken = call(Shell("true"))._replace(limits=None)  # (a Call no action can run)
    [result] = parallel.run([("h", broken)], None)
    assert result.status == Status.ERROR and result.fails_closed
    assert result.error is not None and result.error.startswith("initd could not run it: ")
