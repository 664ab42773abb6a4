"""``initd turn`` (initd/commands/turn.py): exit 2 when the agent should be re-prompted
(the message in the JSON printed), 0 otherwise; an --id that is no key, or one the
service refuses (422, 409), is exit 125 and one line, never an answer to read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from initd.commands.turn import turn
from initd.errors import InitdError
from tests.support.fakeservice import json_answer, serving


def test_exit_2_asks_for_a_re_prompt(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    sock = str(tmp_path / "s.sock")
    answers = [json_answer(200, {"action": "reprompt", "message": "fix a.py"}),
               json_answer(200, {"action": "none"})]
    with serving(sock, lambda req: answers.pop(0)) as seen:
        assert turn(["--socket", sock, "--trigger", "hook", "--id", "t-1"]) == 2
        assert json.loads(capsys.readouterr().out)["message"] == "fix a.py"
        assert turn(["--socket", sock]) == 0
    head, _, body = seen[0].partition(b"\r\n\r\n")
    assert json.loads(body) == {"trigger": "hook"} and b"Idempotency-Key: t-1" in head
    assert b"Idempotency-Key: initd-" in seen[1]  # a new key of its own


@pytest.mark.parametrize("code", [409, 422])
def test_a_refused_key_is_initds_error(tmp_path: Path, code: int) -> None:
    sock = str(tmp_path / "s.sock")
    with serving(sock, lambda req: json_answer(code, {"error": "the key of another turn"})), \
            pytest.raises(InitdError, match=f"HTTP {code}: the key of another turn"):
        turn(["--socket", sock, "--id", "t-1"])


def test_an_id_that_is_no_key_is_never_sent(tmp_path: Path) -> None:
    with pytest.raises(InitdError, match="--id 'a b'"):
        turn(["--socket", str(tmp_path / "none.sock"), "--id", "a b"])
