"""``initd emit EVENT`` (initd/commands/emit.py): exit 0, 2 when blocked (the reason on
stderr), 3 when aborted or told to stop; a blockable event whose hooks could not be asked
(no service, an answer cut, a refusal, a payload initd cannot take) is blocked, never
"go ahead" (invariant 12); a non-blockable one is initd's error."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from initd.commands.emit import emit
from initd.errors import InitdError, UsageError
from tests.support.fakeservice import json_answer, serving


@pytest.mark.parametrize(("outcome", "code", "said"), [
    ({"blocked": False}, 0, ""), ({"blocked": True, "reason": "no rm"}, 2,
                                  "initd: blocked: no rm"),
    ({"aborted": True}, 3, ""), ({"continue": False, "stopReason": "halt"}, 3,
                                 "initd: stop: halt"),
    ({"continue": False, "blocked": True}, 3, "initd: stop: continue: false"),  # stop wins
])
def test_what_an_outcome_exits_with(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    outcome: dict[str, object], code: int, said: str) -> None:
    sock = str(tmp_path / "s.sock")
    with serving(sock, lambda req: json_answer(200, outcome)) as seen:
        assert emit(["pre_tool", "--data", '{"tool_name": "Bash"}', "--socket", sock]) == code
    assert capsys.readouterr().err.strip() == said
    head, _, body = seen[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/events/pre_tool HTTP/1.0")
    assert json.loads(body) == {"tool_name": "Bash"} and b"Idempotency-Key: initd-" in head


@pytest.mark.parametrize("answer", [None, json_answer(503, {"error": "busy"}),
                                    json_answer(500, {"error": "bug"})])
def test_a_blockable_event_its_hooks_could_not_see_is_blocked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], answer: bytes | None) -> None:
    sock = str(tmp_path / "s.sock")
    with serving(sock, lambda req: answer):
        assert emit(["pre_tool", "--socket", sock, "--id", "k"]) == 2
    assert capsys.readouterr().err.startswith("initd: blocked: ")
    assert emit(["stop", "--socket", str(tmp_path / "none.sock")]) == 2


def test_a_non_blockable_event_without_a_service_is_initds_error(tmp_path: Path) -> None:
    with pytest.raises(InitdError, match="no hook service"):
        emit(["after_turn", "--socket", str(tmp_path / "none.sock")])


def test_a_payload_initd_cannot_read(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    monkeypatch.setattr("sys.stdin", io.StringIO('{"a": ' + deep + "}"))
    assert emit(["pre_tool", "--data", "-", "--socket", str(tmp_path / "none")]) == 2
    assert "nested too deep" in capsys.readouterr().err
    with pytest.raises(UsageError, match="nested too deep"):
        emit(["after_turn", "--data", deep])
    for bad, said in (("{", "not valid JSON"), ("[1]", "expected a JSON object")):
        with pytest.raises(UsageError, match=said):
            emit(["pre_tool", "--data", bad])
    with pytest.raises(UsageError, match="the event's name is required"):
        emit([])


def test_an_event_name_is_quoted_into_the_path(tmp_path: Path) -> None:
    sock = str(tmp_path / "s.sock")
    with serving(sock, lambda req: json_answer(200, {})) as seen:
        emit(["a b/../c", "--socket", sock])
    assert seen[0].startswith(b"POST /v1/events/a%20b%2F..%2Fc HTTP/1.0")
