"""The event verdict as a pure function, by table: a result, the hook's flags and the
event in; block, abort, the hook's own decision, the reason and the note out."""

from __future__ import annotations

import pytest

from initd.events.actions import ActionResult, Status
from initd.events.dialects import DIALECTS
from initd.events.model import EventHook, Shell
from initd.events.verdict import Decision, Verdict, verdict
from initd.hooks import kinds

PRE_TOOL = kinds.BY_NAME["pre_tool"]  # blockable
AFTER_TURN = kinds.BY_NAME["after_turn"]  # not blockable


def hook(**flags: object) -> EventHook:
    return EventHook(event="pre_tool", dialect="nyzhi", source="/ws/c.toml",
                     key="agent.hooks[0]", label="check", spec=Shell("check"),
                     timeout=5.0, wait=True)._replace(**flags)


def done(status: Status, code: int | None = None, out: str = "", err: str = "",
         **more: object) -> ActionResult:
    return ActionResult(status, code, out, err)._replace(**more)


BLOCK_JSON = '{"decision": "block", "reason": "tests fail", "feedback": "run npm test"}'
APPROVE_JSON = '{"decision": "approve", "reason": "fine by me"}'
NOT_JSON = ("its stdout starts like a JSON answer but is not JSON: Expecting property name "
            "enclosed in double quotes: line 1 column 2 (char 1)")


@pytest.mark.parametrize(("result", "flags", "event", "expected"), [
    (done(Status.OK, 0), {}, PRE_TOOL, Verdict(False, False, None, None, None, None)),
    (done(Status.FAILED, 2, err="nope\n"), {}, PRE_TOOL,
     Verdict(True, False, None, "nope", None, None)),
    (done(Status.FAILED, 2, out="only stdout\n"), {}, PRE_TOOL,
     Verdict(True, False, None, "only stdout", None, None)),
    (done(Status.FAILED, 2), {}, PRE_TOOL,
     Verdict(True, False, None, "blocked by check (exit 2)", None, None)),
    (done(Status.FAILED, 2, err="nope"), {"exit2_blocks": False}, PRE_TOOL,
     Verdict(False, False, None, None, None, None)),  # nyzhi: exit 2 alone is a failure
    (done(Status.FAILED, 1), {}, PRE_TOOL, Verdict(False, False, None, None, None, None)),
    (done(Status.FAILED, 1, err="bad"), {"block": True}, PRE_TOOL,
     Verdict(True, False, None, "bad", None, None)),
    (done(Status.FAILED, 2, err="nope"), {}, AFTER_TURN,
     Verdict(False, False, None, None, None, "asked to block, but after_turn cannot be "
                                            "blocked")),
    (done(Status.OK, 0, out=BLOCK_JSON), {}, PRE_TOOL,
     Verdict(True, False, Decision.BLOCK, "tests fail", "run npm test", None)),
    (done(Status.FAILED, 2, out=APPROVE_JSON), {}, PRE_TOOL,  # an explicit answer wins
     Verdict(False, False, Decision.APPROVE, "fine by me", None, None)),
    (done(Status.ERROR, error="timed out"), {}, PRE_TOOL,
     Verdict(False, False, None, "check: timed out", None, "timed out")),
    (done(Status.ERROR, error="timed out"), {"on_error": "deny"}, PRE_TOOL,
     Verdict(True, False, None, "check: timed out", None, "timed out")),
    (done(Status.UNTRUSTED, error="not trusted"), {"on_error": "deny"}, AFTER_TURN,
     Verdict(False, False, None, "check: not trusted", None, "not trusted")),
    (done(Status.FAILED, 1), {"on_failure": "abort"}, AFTER_TURN,
     Verdict(False, True, None, None, None, None)),
    (done(Status.STARTED), {"on_failure": "abort"}, AFTER_TURN,
     Verdict(False, False, None, None, None, None)),  # not awaited: not a failure
    (done(Status.OK, 0, aborted=True), {}, AFTER_TURN,  # a webhook's on_timeout: abort
     Verdict(False, True, None, None, None, None)),
    (done(Status.OK, 0, out='{"decision": "maybe"}'), {}, PRE_TOOL,
     Verdict(False, False, None, None, None, None)),  # not a decision: ignored
    # (was: no block. A stdout that starts like a JSON answer and is not one is the
    # hook's error, which blocks a blockable event whatever on_error says: invariant 12)
    (done(Status.OK, 0, out="{not json"), {}, PRE_TOOL,
     Verdict(True, False, None, f"check: {NOT_JSON}", None, NOT_JSON, status=Status.ERROR)),
    (done(Status.OK, 0, out="{not json"), {}, AFTER_TURN,
     Verdict(False, False, None, f"check: {NOT_JSON}", None, NOT_JSON, status=Status.ERROR)),
])
def test_verdict(result: ActionResult, flags: dict[str, object], event: kinds.Event,
                 expected: Verdict) -> None:
    given = hook(**flags)
    assert verdict(result, given, event, DIALECTS[given.dialect]) == expected
