"""``initd services`` (initd/commands/services.py): the image's services as a table or
JSON, and start, stop or restart of one, against a stand-in of the control API: the
request each makes, a refusal (403: not the agent's service) on stderr with exit 1, and
a field the agent's side forged (a newline, a terminal escape) kept to one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from initd.commands.services import main, uptime
from initd.errors import UsageError
from tests.support.fakeservice import json_answer, serving

SERVICES = {"web": {"state": "running", "pid": 42, "restarts": 1, "lastExitCode": 137,
                    "startedAt": "2026-01-01T00:00:00Z", "readyBy": "port 8000"},
            "migrate": {"state": "done", "pid": None, "restarts": 0, "lastExitCode": 0,
                        "startedAt": None, "readyBy": None}}


def test_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sock = str(tmp_path / "s.sock")
    with serving(sock, lambda req: json_answer(200, {"services": SERVICES})) as seen:
        assert main(["--socket", sock]) == 0
    assert seen[0].startswith(b"GET /v1/services HTTP/1.0\r\n")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "STATE", "PID", "UPTIME", "RESTARTS", "LAST-EXIT",
                                "READY-BY"]
    assert lines[1].split()[:3] == ["web", "running", "42"] and lines[1].endswith("port 8000")
    assert lines[2].split() == ["migrate", "done", "-", "-", "0", "0", "-"]


def test_json_and_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sock = str(tmp_path / "s.sock")
    with serving(sock, lambda req: json_answer(200, {"services": SERVICES})):
        assert main(["--socket", sock, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"services": SERVICES}
    with serving(sock + "2", lambda req: json_answer(200, {"services": {}})):
        assert main(["--socket", sock + "2"]) == 0
    assert capsys.readouterr().out == "no services (initd.yaml declares none)\n"


def test_a_verb_and_its_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sock = str(tmp_path / "s.sock")
    answers = [json_answer(200, {"service": "web", "verb": "restart", "result": "restarting"}),
               json_answer(403, {"error": "service 'db' runs as uid 0, not as the agent"})]
    with serving(sock, lambda req: answers.pop(0)) as seen:
        assert main(["--socket", sock, "restart", "web"]) == 0
        assert main(["--socket", sock, "stop", "db"]) == 1
    assert seen[0].startswith(b"POST /v1/services/web/restart HTTP/1.0\r\n")
    assert seen[1].startswith(b"POST /v1/services/db/stop HTTP/1.0\r\n")
    said = capsys.readouterr()
    assert said.out == "web: restarting\n"
    assert said.err == "initd: service 'db' runs as uid 0, not as the agent\n"
    with pytest.raises(UsageError, match="which service"):
        main(["--socket", sock, "stop"])


def test_a_forged_field_stays_in_its_cell(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    sock = str(tmp_path / "s.sock")
    forged = {"web\nroot  running": {"state": "up\x1b[2J", "pid": 1, "readyBy": "x\ny"}}
    with serving(sock, lambda req: json_answer(200, {"services": forged})):
        assert main(["--socket", sock]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and "\x1b" not in lines[1]


def test_uptime() -> None:
    assert uptime("not a time") == "-"
    assert uptime("2000-01-01T00:00:00Z").endswith("m") and "h" in uptime("2000-01-01T00:00Z")
