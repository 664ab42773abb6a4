"""``initd sessions`` (initd/commands/sessions.py): the session records, newest first,
read without a running initd, from --state-dir or the user's ~/.discobot; as a table or
JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from initd.commands.sessions import sessions
from initd.events.records import Sessions
from initd.state.agentfs import Place


def test_the_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    made = Sessions(Place(str(state)), "s1", str(tmp_path))
    made.open(["agent"])
    made.end(None, {"event": "stop", "blocked": True}, {})
    assert sessions(["--state-dir", str(state), "--json"]) == 0
    [record] = json.loads(capsys.readouterr().out)
    assert (record["id"], record["events"], record["blocked"]) == ("s1", 1, 1)
    assert sessions(["--state-dir", str(state)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "STATUS", "STARTED", "ENDED", "EVENTS", "BLOCKED",
                                "WORKSPACE"]
    assert lines[1].split()[:2] == ["s1", "active"] and lines[1].split()[3:6] == [
        "-", "1", "1"]


def test_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert sessions(["--state-dir", str(tmp_path / "none"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
