"""What a Codex hook's answer means (initd/events/codex/answers.py), by table: what Codex
reads in it, and a hook that could not run blocks only when initd failed."""

from __future__ import annotations

import json

import pytest

from initd.events.actions import ActionResult, Status
from initd.events.codex import answers
from initd.events.codex.names import EVENTS
from initd.events.verdict import Verdict
from initd.hooks import kinds


def result(code: int, out: str = "", err: str = "") -> ActionResult:
    return ActionResult(Status.OK if code == 0 else Status.FAILED, code, out, err)


def answer(event: str, code: int, out: object = "", err: str = "") -> Verdict:
    text = out if isinstance(out, str) else json.dumps(out)
    return answers.answer(result(code, text, err), "h", kinds.BY_NAME[EVENTS[event]], False)


@pytest.mark.parametrize(("event", "code", "out", "err", "blocks", "failed"), [
    ("PreToolUse", 2, "", "no", True, False),
    ("PreToolUse", 2, "", "", False, True),
    ("PreToolUse", 1, "", "no", False, True),
    ("PreToolUse", 0, {"decision": "block"}, "", False, True),
    ("PreToolUse", 0, {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                              "permissionDecision": "deny",
                                              "permissionDecisionReason": "x"}}, "", False, True),
    ("PreToolUse", 0, {"continue": True, "decision": "block", "reason": "x"}, "", True, False),
    ("PostToolUse", 2, "", "look", False, False),
    ("PostToolUse", 0, {"suppressOutput": True}, "", False, True),
    ("UserPromptSubmit", 0, {"decision": "block", "reason": "x", "continue": None}, "", True,
     False),
    ("Stop", 0, "plain", "", False, True),
    ("PreCompact", 0, {"decision": "block", "reason": "x"}, "", False, True),
    ("SessionEnd", 0, {"anything": 1}, "", False, False),
    ("Interrupt", 0, {"systemMessage": "x", "continue": False}, "", False, True),
])
def test_what_codex_reads_in_an_answer(event: str, code: int, out: object, err: str,
                                       blocks: bool, failed: bool) -> None:
    said = answer(event, code, out, err)
    assert said.blocks is blocks and (said.status == Status.FAILED) is failed, said


def test_a_hook_that_could_not_run_blocks_only_when_initd_failed() -> None:
    event = kinds.BY_NAME["pre_tool"]
    mine = answers.answer(ActionResult(Status.ERROR, error="timed out"), "h", event, False)
    initds = answers.answer(ActionResult(Status.ERROR, error="E2BIG", fails_closed=True),
                            "h", event, False)
    assert not mine.blocks and initds.blocks and initds.permission == "deny"
