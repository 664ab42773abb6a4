"""OpenAI Codex hooks: what a Codex hook answers (exit code, stdout JSON, stderr) becomes
the answer ``initd emit --from codex`` gives Codex, which Codex reads by its own rules
(codex_hooks_answers.read_answer); each answer is also valid by the event's output schema
of @openai/codex@0.171.0. References: codex_hooks_support (HOOKS, SRC, CODEX).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import Session, session_fixture
from tests.conformance.codex_hooks_answers import Answer, read_answer
from tests.conformance.codex_hooks_support import (
    bash,
    deny,
    emit,
    group,
    handler,
    hooks_file,
    payload,
    prints,
    write_json,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cx(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def answer_of(cx: Session, event: str, command: str,
              sent: dict[str, Any] | None = None) -> Answer:
    write_json(cx, "project", hooks_file(**{event: group(handler(command))}))
    cx.start()
    proc = emit(cx, sent if sent is not None else payload(event, cx.ws))
    return read_answer(event, proc)


def pre(**specific: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **specific}}


# PreToolUse ---------------------------------------------------------------------------

DENIES = {
    "exit 2": deny("rm is not allowed here"),
    "permissionDecision deny": prints(pre(permissionDecision="deny",
                                          permissionDecisionReason="rm is not allowed here")),
    "decision block": prints({"decision": "block", "reason": "rm is not allowed here"}),
}


@pytest.mark.parametrize("how", list(DENIES))
def test_a_pre_tool_use_deny_is_codex_deny(cx: Session, how: str) -> None:
    """SRC pre_tool_use.rs: exit 0 with ``hookSpecificOutput.permissionDecision: "deny"``
    and a ``permissionDecisionReason``, or the older ``decision: "block"`` with a
    ``reason``, or ``Some(2)`` with the reason on stderr: "status = HookRunStatus::Blocked;
    should_block = true"."""
    answer = answer_of(cx, "PreToolUse", DENIES[how], bash(cx.ws, "rm -rf /tmp/x"))
    assert answer.blocked and answer.reason == "rm is not allowed here", answer


FAIL_OPEN = {
    "exit 1": "cat >/dev/null; echo oops >&2; exit 1",
    "exit 2 without a reason": "cat >/dev/null; exit 2",
    "ask": prints(pre(permissionDecision="ask", permissionDecisionReason="sure?")),
    "allow without updatedInput": prints(pre(permissionDecision="allow")),
    "deny without a reason": prints(pre(permissionDecision="deny")),
    "approve": prints({"decision": "approve"}),
    "continue false": prints({"continue": False, "stopReason": "halt"}),
    "unknown field": prints({"decision": "block", "reason": "x", "bogus": 1}),
}


@pytest.mark.parametrize("how", list(FAIL_OPEN))
def test_an_answer_codex_rejects_does_not_block(cx: Session, how: str) -> None:
    """SRC output_parser.rs: "PreToolUse hook returned unsupported permissionDecision:ask",
    "... unsupported permissionDecision:allow" (without ``updatedInput``), "...
    permissionDecision:deny without a non-empty permissionDecisionReason", "...
    unsupported decision:approve", "... unsupported continue:false"; pre_tool_use.rs:
    "PreToolUse hook exited with code 2 but did not write a blocking reason to stderr",
    any other exit "hook exited with code N": each is ``HookRunStatus::Failed``, which
    does not block. Codex's own rule is followed: initd answers no block."""
    answer = answer_of(cx, "PreToolUse", FAIL_OPEN[how], bash(cx.ws, "ls"))
    assert not answer.blocked, answer


def test_allow_with_updated_input_rewrites_the_tool_input(cx: Session) -> None:
    """SRC pre_tool_use.rs ``permission_decision_allow_can_update_input``:
    ``{"permissionDecision":"allow","updatedInput":{"command":"echo rewritten"}}`` gives
    ``updated_input``."""
    answer = answer_of(cx, "PreToolUse", prints(pre(
        permissionDecision="allow", updatedInput={"command": "echo rewritten"})))
    assert answer.failed is None and answer.updated_input == {"command": "echo rewritten"}


def test_pre_tool_use_additional_context(cx: Session) -> None:
    """CODEX pre-tool-use.command.output: ``hookSpecificOutput.additionalContext``; SRC:
    "additional_contexts" go to the model."""
    answer = answer_of(cx, "PreToolUse", prints(pre(additionalContext="tests are slow")))
    assert answer.context == ["tests are slow"] and not answer.blocked


def test_pre_tool_use_any_deny_wins(cx: Session) -> None:
    """SRC pre_tool_use.rs: ``should_block = results.iter().any(|r| r.data.should_block)``:
    one allowing hook does not undo another's deny."""
    write_json(cx, "project", hooks_file(PreToolUse=group(
        handler("cat >/dev/null; exit 0"), handler(deny("second says no")),
        handler(prints(pre(permissionDecision="allow", updatedInput={"command": "ls"}))))))
    cx.start()
    answer = read_answer("PreToolUse", emit(cx, bash(cx.ws, "rm -rf /")))
    assert answer.blocked and answer.reason == "second says no", answer


# PermissionRequest ---------------------------------------------------------------------


@pytest.mark.parametrize("command", [
    deny("not outside the sandbox"),
    prints({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {
        "behavior": "deny", "message": "not outside the sandbox"}}})])
def test_a_permission_request_deny(cx: Session, command: str) -> None:
    """SRC permission_request.rs: exit 0 ``decision.behavior: "deny"`` with ``message``,
    or exit 2 with stderr: ``PermissionRequestDecision::Deny { message }``."""
    answer = answer_of(cx, "PermissionRequest", command)
    assert answer.blocked and answer.reason == "not outside the sandbox", answer


def test_a_permission_request_allow(cx: Session) -> None:
    """SRC permission_request.rs: ``decision.behavior: "allow"`` approves without asking
    the user."""
    answer = answer_of(cx, "PermissionRequest", prints({"hookSpecificOutput": {
        "hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}))
    assert answer.allowed and not answer.blocked, answer


def test_a_permission_request_deny_beats_an_allow(cx: Session) -> None:
    """SRC permission_request.rs: "Fold the decisions conservatively: any deny wins,
    otherwise the last allow wins, otherwise there is no hook verdict." """
    allow = prints({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                           "decision": {"behavior": "allow"}}})
    write_json(cx, "project", hooks_file(PermissionRequest=group(
        handler(allow), handler(deny("repo deny")))))
    cx.start()
    answer = read_answer("PermissionRequest", emit(cx, payload("PermissionRequest", cx.ws)))
    assert answer.blocked and answer.reason == "repo deny" and not answer.allowed


def test_no_permission_verdict_lets_codex_ask(cx: Session) -> None:
    """SRC permission_request.rs: "or decline to decide and let the normal approval flow
    continue": a hook that prints nothing is neither allow nor deny."""
    answer = answer_of(cx, "PermissionRequest", "cat >/dev/null")
    assert not answer.allowed and not answer.blocked and answer.failed is None


# PostToolUse ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", [
    "cat >/dev/null; echo 'output looked sketchy' >&2; exit 2",
    prints({"decision": "block", "reason": "output looked sketchy"})])
def test_post_tool_use_feedback_reaches_the_model(cx: Session, command: str) -> None:
    """SRC post_tool_use.rs ``exit_two_surfaces_feedback_to_model_without_blocking`` and
    ``block_decision_stops_normal_processing``: the reason becomes
    ``feedback_messages_for_model``."""
    answer = answer_of(cx, "PostToolUse", command)
    assert answer.feedback == "output looked sketchy", answer


def test_post_tool_use_continue_false_stops(cx: Session) -> None:
    """SRC post_tool_use.rs ``continue_false_stops_with_reason``."""
    answer = answer_of(cx, "PostToolUse", prints(
        {"continue": False, "stopReason": "halt after bash", "reason": "stop now"}))
    assert answer.stopped and answer.stop_reason == "halt after bash"


# UserPromptSubmit, SessionStart, Stop, compaction, Interrupt ----------------------------


@pytest.mark.parametrize("command", [
    "cat >/dev/null; echo 'no secrets in prompts' >&2; exit 2",
    prints({"decision": "block", "reason": "no secrets in prompts"})])
def test_a_prompt_is_blocked(cx: Session, command: str) -> None:
    """SRC user_prompt_submit.rs ``exit_code_two_blocks_processing`` and
    ``claude_block_decision_blocks_processing``."""
    answer = answer_of(cx, "UserPromptSubmit", command)
    assert answer.blocked and answer.reason == "no secrets in prompts", answer


@pytest.mark.parametrize("event", ["UserPromptSubmit", "SessionStart", "SubagentStart"])
def test_plain_stdout_is_context(cx: Session, event: str) -> None:
    """SRC session_start.rs ``plain_stdout_becomes_model_context`` (SessionStart and
    SubagentStart), user_prompt_submit.rs: plain stdout is ``additional_context``."""
    answer = answer_of(cx, event, "cat >/dev/null; echo 'the repo uses pnpm'")
    assert answer.context == ["the repo uses pnpm"], answer


@pytest.mark.parametrize("event", ["SessionStart", "UserPromptSubmit", "Stop", "PreCompact",
                                   "PostCompact"])
def test_continue_false_stops(cx: Session, event: str) -> None:
    """SRC: ``continue_false_preserves_context_for_later_turns`` (SessionStart,
    UserPromptSubmit), stop.rs and compact.rs ``continue_false_stops_before_compaction``:
    ``continue: false`` is ``HookRunStatus::Stopped`` with ``stopReason``."""
    answer = answer_of(cx, event, prints({"continue": False, "stopReason": "pause"}))
    assert answer.stopped and answer.stop_reason == "pause", answer


@pytest.mark.parametrize("event", ["Stop", "SubagentStop"])
@pytest.mark.parametrize("how", ["exit 2", "json"])
def test_a_stop_block_is_a_continuation_prompt(cx: Session, event: str, how: str) -> None:
    """SRC stop.rs: exit 2 with stderr, or ``decision: "block"`` with ``reason``: "should_block
    = true; continuation_prompt = Some(reason)" (the agent keeps working on it)."""
    command = deny("run the tests first") if how == "exit 2" else \
        prints({"decision": "block", "reason": "run the tests first"})
    answer = answer_of(cx, event, command)
    assert answer.blocked and answer.reason == "run the tests first", answer


def test_stop_plain_stdout_is_not_an_answer(cx: Session) -> None:
    """SRC stop.rs: non-JSON stdout on exit 0 is "hook returned invalid stop hook JSON
    output" to Codex; initd's answer to Codex is never such text (no error, no block)."""
    answer = answer_of(cx, "Stop", "cat >/dev/null; echo 'all done'")
    assert answer.failed is None and not answer.blocked, answer


def test_pre_compact_cannot_block(cx: Session) -> None:
    """SRC compact.rs ``block_decision_is_not_supported_for_pre_compact``: ``decision:
    "block"`` is "invalid PreCompact hook JSON output"; compaction goes on."""
    answer = answer_of(cx, "PreCompact", prints({"decision": "block", "reason": "no"}))
    assert not answer.blocked and not answer.stopped


def test_interrupt_and_session_end_are_observed(cx: Session) -> None:
    """CODEX interrupt.command.output allows only ``systemMessage``; SRC: "Interrupt hook
    returned non-JSON stdout" is an error. SessionEnd has no output schema."""
    write_json(cx, "project", hooks_file(
        Interrupt=group(handler(cx.record("i") + "; echo 'noted'")),
        SessionEnd=group(handler(cx.record("e")))))
    cx.start()
    for event in ("Interrupt", "SessionEnd"):
        answer = read_answer(event, emit(cx, payload(event, cx.ws)))
        assert answer.failed is None and not answer.blocked, answer
    assert cx.runs("i") == 1 and cx.runs("e") == 1


def test_a_system_message_is_passed_on(cx: Session) -> None:
    """CODEX: every output schema but SessionEnd's has ``systemMessage``; SRC: it is a
    warning shown to the user (``HookOutputEntryKind::Warning``)."""
    answer = answer_of(cx, "PostToolUse", prints({"systemMessage": "lint has 3 warnings"}))
    assert answer.system_message == "lint has 3 warnings", answer
