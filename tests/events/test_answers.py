"""A hook's answer as initd reads it (initd/events/answers.py): what a result keeps of
stdout, and an answer that looks like JSON read whole, or that hook's error (invariant 12:
never a pass)."""

from __future__ import annotations

from typing import Any

import pytest

from initd.events import answers
from initd.events.actions import ActionResult, Status


def result(out: str, code: int = 0, **more: Any) -> ActionResult:
    return ActionResult(Status.OK if code == 0 else Status.FAILED, code, out, **more)


@pytest.mark.parametrize(("head", "tail", "whole", "fields"), [
    (b"short", b"", True, {"stdout": "short"}),
    (b"a" * 30_000, b"b" * 30_000, True, {"stdout": "a" * 30_000 + "b" * 30_000}),
    (b"{" + b" " * 200_000, b"}", True, {"stdout": "{" + " " * 32767 + answers.ELIDED
                                         + " " * 32767 + "}", "answer": "{" + " " * 200_000
                                         + "}", "cut": False}),
    (b"x" * 200_000, b"", True, {"stdout": "x" * 32768 + answers.ELIDED + "x" * 32768,
                                 "answer": None, "cut": False}),  # plain: shown only
    (b"{" * 10, b"}", False, {"stdout": "{" * 10 + answers.ELIDED + "{" * 10 + "}",
                              "answer": None, "cut": True}),
])
def test_what_a_result_keeps_of_stdout(head: bytes, tail: bytes, whole: bool,
                                       fields: dict[str, Any]) -> None:
    assert answers.kept(head, tail, whole) == fields


@pytest.mark.parametrize(("given", "read"), [
    (result("plain text"), None),
    (result('  {"decision": "block"}\n'), {"decision": "block"}),
    (result("{…", answer='{"reason": "' + "x" * 100_000 + '"}'), {"reason": "x" * 100_000}),
    (result("{oops"), "not JSON: Expecting property name"),
    (result("{" + "[" * 5000 + "]" * 5000 + "}"), "not JSON"),  # (a key is missing)
    (result('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"), "nested too deep"),
    (result('{"decision": "block", …', cut=True), "over 1 MiB"),
])
def test_reading_an_answer(given: ActionResult, read: dict[str, Any] | str | None) -> None:
    if isinstance(read, str):
        with pytest.raises(answers.Unreadable, match=read):
            answers.read(given)
    else:
        assert answers.read(given) == read
