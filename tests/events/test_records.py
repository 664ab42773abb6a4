"""Session records, AutoAgent's design (initd/events/records.py): a record per session,
a line per event, ``current`` naming the live one; an event that outlasts MARK_AFTER is
``running`` in the record until it ends, and closed as interrupted by the next start if
its process died; the listing skips what is not a record, never following a link. The
engine's use of them: tests/events/test_sessions_trust.py."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from initd.events import records
from initd.state.agentfs import Place
from tests.support.harness import wait_for


def sessions(tmp_path: Path, sid: str = "s1") -> records.Sessions:
    (tmp_path / "ws").mkdir(exist_ok=True)
    return records.Sessions(Place(str(tmp_path / "state")), sid, str(tmp_path / "ws"))


def record(tmp_path: Path, sid: str = "s1") -> dict[str, object]:
    data: dict[str, object] = json.loads(
        (tmp_path / "state" / "sessions" / f"{sid}.json").read_text())
    return data


def lines(tmp_path: Path, sid: str = "s1") -> list[dict[str, object]]:
    text = (tmp_path / "state" / "sessions" / f"{sid}.events.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_a_record_its_events_and_current(tmp_path: Path) -> None:
    made = sessions(tmp_path)
    assert made.open(["agent", "--fast"]) == []
    first = record(tmp_path)
    assert (first["status"], first["command"], first["args"], first["endTime"]) == (
        "active", "agent", ["--fast"], None)
    assert first["metadata"] == {"gitBranch": None, "gitCommit": None}  # no repository
    assert os.readlink(tmp_path / "state" / "sessions" / "current") == "s1.json"
    made.end(None, {"event": "after_turn", "blocked": True, "results": [
        {"stdout": "x" * 10_000, "stderr": ""}]}, {})
    [line] = lines(tmp_path)
    assert line["event"] == "after_turn" and len(line["results"][0]["stdout"]) == \
        records.KEEP_OUTPUT  # type: ignore[index]
    made.close("completed")
    assert record(tmp_path)["status"] == "completed" and record(tmp_path)["endTime"]


def test_the_git_place_of_a_repository(tmp_path: Path) -> None:
    made = sessions(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(tmp_path / "ws")], check=True,
                   env=env)
    subprocess.run(["git", "-C", str(tmp_path / "ws"), "-c", "user.name=t", "-c",
                    "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"],
                   check=True, env=env)
    made.open()
    meta = record(tmp_path)["metadata"]
    assert meta["gitBranch"] == "trunk" and len(meta["gitCommit"]) == 40  # type: ignore[index]


def test_an_event_that_lasts_is_running_until_it_ends(tmp_path: Path) -> None:
    made = sessions(tmp_path)
    made.open()
    marker = made.begin("pre_execution_end")
    wait_for(lambda: record(tmp_path).get("running"), what="marked running")
    [running] = record(tmp_path)["running"].values()  # type: ignore[attr-defined]
    assert running["event"] == "pre_execution_end" and running["runner"][0] == os.getpid()
    made.end(marker, {"event": "pre_execution_end"}, {})
    assert record(tmp_path)["running"] == {}


def test_a_quick_event_never_touches_the_record(tmp_path: Path) -> None:
    made = sessions(tmp_path)
    made.open()
    before = (tmp_path / "state" / "sessions" / "s1.json").stat().st_mtime_ns
    made.end(made.begin("after_turn"), {"event": "after_turn"}, {})
    assert record(tmp_path)["running"] == {}
    assert (tmp_path / "state" / "sessions" / "s1.json").stat().st_mtime_ns == before


def test_what_a_dead_process_left_running_is_closed_as_interrupted(tmp_path: Path) -> None:
    made = sessions(tmp_path)
    made.open()
    path = tmp_path / "state" / "sessions" / "s1.json"
    data = json.loads(path.read_text())
    data["running"] = {"dead-1": {"event": "pre_tool", "startedAt": "t",
                                  "runner": [2**22 + 1, 1]},
                       "forged": {"event": "stop", "runner": "not a runner"}}
    path.write_text(json.dumps(data))
    assert sorted(sessions(tmp_path).open()) == ["pre_tool", "stop"]
    assert record(tmp_path)["running"] == {}
    assert [(ln["event"], ln["interrupted"]) for ln in lines(tmp_path)] == [
        ("pre_tool", True), ("stop", True)]


def test_autoagents_issue_fields(tmp_path: Path) -> None:
    made = sessions(tmp_path)
    made.open()
    made.end(None, {"event": "pre_execution_start"}, {"issueNumber": 7})
    assert (record(tmp_path)["currentIssue"], record(tmp_path)["issuesPlanned"]) == (7, [7])
    made.end(None, {"event": "post_execution_end"}, {"issue_number": 7, "success": False})
    assert (record(tmp_path)["currentIssue"], record(tmp_path)["issuesFailed"]) == (None, [7])
    made.end(None, {"event": "pre_execution_start"}, {"issueNumber": True})  # not a number
    assert record(tmp_path)["currentIssue"] is None


def test_the_listing_newest_first_skipping_what_is_not_a_record(tmp_path: Path) -> None:
    for sid in ("old", "new"):
        made = sessions(tmp_path, sid)
        made.open()
        made.end(None, {"event": "stop", "blocked": True, "reason": "r"}, {})
    folder = tmp_path / "state" / "sessions"
    data = json.loads((folder / "old.json").read_text())
    data["startTime"] = "2000-01-01T00:00:00.000Z"
    (folder / "old.json").write_text(json.dumps(data))
    with (folder / "new.events.jsonl").open("a") as out:
        out.write('{"event": "cut\n[1]\n')  # a line cut by a crash; no object
    (folder / "secret.json").symlink_to("/etc/passwd")
    os.mkfifo(folder / "fifo.json")
    (folder / "list.json").write_text("[1]")
    found = records.listing(Place(str(tmp_path / "state")))
    assert [r["id"] for r in found] == ["new", "old"]
    assert (found[0]["events"], found[0]["blocked"], found[0]["lastEvent"]) == (
        1, 1, {"event": "stop", "at": found[0]["lastEvent"]["at"],  # type: ignore[index]
               "blocked": True, "reason": "r"})
    assert records.listing(Place(str(tmp_path / "none"))) == []
