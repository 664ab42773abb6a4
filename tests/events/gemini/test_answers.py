"""What a Gemini CLI hook's answer means (initd/events/gemini/answers.py), where the reference
and Gemini's engine read it differently."""

from __future__ import annotations

import json

import pytest

from initd.events.actions import ActionResult, Status
from initd.events.gemini import answers
from initd.events.model import EventHook, Script
from initd.hooks import kinds

HOOK = EventHook(event="pre_tool", dialect="gemini", source="s", key="k", label="guard",
                 spec=Script("x", "x"), timeout=1, wait=True)


@pytest.mark.parametrize("code, out, err, blocks", [
    (2, '{"decision": "allow"}', "no", True),  # exit 2 blocks (the reference), JSON or not
    (3, "", "denied by text", True),  # text on another exit: the engine's deny
    (1, "", "lint crashed", False),  # a warning
    (0, "", '{"decision": "deny", "reason": "on stderr"}', True),  # stdout empty: stderr's
    (0, "checking... {}", "", False),  # text: a message for the user
])
def test_what_an_answer_means(code: int, out: str, err: str, blocks: bool) -> None:
    result = ActionResult(Status.OK if code == 0 else Status.FAILED, code, out, err)
    said = answers.verdict(result, HOOK, kinds.BY_NAME["pre_tool"])
    assert said.blocks is blocks, said


def test_an_advisory_events_decision_and_continue_are_not_read() -> None:
    result = ActionResult(Status.OK, 0, json.dumps({"continue": False, "decision": "deny",
                                                    "systemMessage": "hi"}))
    said = answers.verdict(result, HOOK._replace(event="session_start"),
                           kinds.BY_NAME["session_start"])
    assert not said.blocks and said.continue_ is None and said.system_message == "hi"


def test_after_tools_deny_replaces_the_result() -> None:
    result = ActionResult(Status.OK, 0, json.dumps({"decision": "deny", "reason": "[gone]"}))
    said = answers.verdict(result, HOOK._replace(event="post_tool"),
                           kinds.BY_NAME["post_tool"])
    assert not said.blocks and said.updated_output == "[gone]"
