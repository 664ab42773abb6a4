"""``initd health`` and ``initd ready`` for people (initd/commands/health.py): the answer
indented, exit 0 while the service answers (health) or once the agent is ready (ready),
1 with the reason, 125 when there is no answer within --timeout."""

from __future__ import annotations

from pathlib import Path

import pytest

from initd.commands.health import health, ready
from initd.errors import InitdError
from tests.support.fakeservice import json_answer, serving


def test_health(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sock = str(tmp_path / "s.sock")
    with serving(sock, lambda req: json_answer(200, {"status": "degraded"})) as seen:
        assert health(["--socket", sock]) == 0
    assert '"status": "degraded"' in capsys.readouterr().out
    assert seen[0].startswith(b"GET /v1/health ")


def test_ready_or_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sock = str(tmp_path / "s.sock")
    answers = [json_answer(503, {"ready": False, "error": "the agent is starting"}),
               json_answer(200, {"ready": True})]
    with serving(sock, lambda req: answers.pop(0)):
        assert ready(["--socket", sock]) == 1
        assert "initd: the agent is starting" in capsys.readouterr().err
        assert ready(["--socket", sock]) == 0


def test_no_answer_is_initds_error_exit_125(tmp_path: Path) -> None:
    sock = str(tmp_path / "s.sock")
    with serving(sock, lambda req: None), pytest.raises(InitdError) as raised:
        health(["--socket", sock, "--timeout", "5"])  # hung up without an answer
    assert raised.value.exit_code == 125
    with pytest.raises(InitdError, match="no hook service"):
        ready(["--socket", str(tmp_path / "none.sock")])
