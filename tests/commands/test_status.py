"""``initd status`` (initd/commands/status.py): the hook service's status.json, as JSON;
the service's refusal on stderr, exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from initd.commands.status import status
from tests.support.fakeservice import json_answer, serving


def test_the_status_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sock = str(tmp_path / "s.sock")
    with serving(sock, lambda req: json_answer(200, {"version": 1, "hooks": {}})) as seen:
        assert status(["--socket", sock]) == 0
    assert json.loads(capsys.readouterr().out) == {"version": 1, "hooks": {}}
    assert seen[0].startswith(b"GET /v1/status HTTP/1.0\r\n")


def test_a_refusal_is_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sock = str(tmp_path / "s.sock")
    with serving(sock, lambda req: json_answer(500, {"error": "no\nforged"})):
        assert status(["--socket", sock]) == 1
    assert capsys.readouterr().err == "initd: no\\nforged\n"
