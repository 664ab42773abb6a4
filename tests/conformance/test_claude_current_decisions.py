"""The decision fields of Claude Code's events, through ``initd emit --from claude``: what a
hook answers in JSON, Claude Code must get from initd's answer with the same meaning. Every
case cites REF (https://code.claude.com/docs/en/hooks, the revision of 2026-08-22, Claude
Code v2.1.240), "Decision control" and the event's own section.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_current_support import Answer, emit_from, payload, read_answer
from tests.conformance.claude_hooks_support import (
    Session,
    command,
    group,
    hooks,
    q,
    session_fixture,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cc(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def prints(obj: dict[str, Any]) -> str:
    return f"cat >/dev/null; printf '%s' {q(json.dumps(obj))}"


def says(event: str, **specific: Any) -> str:  # {"hookSpecificOutput": {...}}
    return prints({"hookSpecificOutput": {"hookEventName": event, **specific}})


def answered(cc: Session, event: str, *commands: str, **fields: Any) -> Answer:
    cc.project(hooks(**{event: group(*(command(text) for text in commands))}))
    cc.start()
    answer = read_answer(event, emit_from(cc, payload(event, cc, **fields)))
    assert answer.problems == [], answer.describe()
    return answer


# -- PreToolUse ---------------------------------------------------------------------------------


def test_pre_tool_use_defer_is_relayed(cc: Session) -> None:
    """REF, "PreToolUse decision control": `permissionDecision` ""defer" exits gracefully
    so the tool can be resumed later" (honoured in `-p` mode only)."""
    answer = answered(cc, "PreToolUse", says("PreToolUse", permissionDecision="defer"))
    assert answer.permission == "defer" and not answer.blocked, answer.describe()


@pytest.mark.parametrize("decisions, wins", [(["allow", "ask"], "ask"),
                                             (["ask", "defer", "allow"], "defer"),
                                             (["allow", "defer", "deny", "ask"], "deny")])
def test_pre_tool_use_precedence_is_deny_defer_ask_allow(cc: Session, decisions: list[str],
                                                         wins: str) -> None:
    """REF, "PreToolUse decision control": "When multiple PreToolUse hooks return different
    decisions, precedence is deny > defer > ask > allow"."""
    answer = answered(cc, "PreToolUse", *(says("PreToolUse", permissionDecision=d,
                                               permissionDecisionReason=f"hook {d}")
                                          for d in decisions))
    assert answer.permission == wins, answer.describe()
    assert answer.blocked is (wins == "deny")


def test_pre_tool_use_updated_input_and_context(cc: Session) -> None:
    """REF: `updatedInput` "Replaces the entire input object"; `additionalContext` "String
    added to Claude's context alongside the tool result"."""
    new = {"command": "npm test -- --bail", "description": "Run test suite"}
    answer = answered(cc, "PreToolUse", says("PreToolUse", permissionDecision="allow",
                                             updatedInput=new,
                                             additionalContext="Target: staging."))
    assert answer.specific.get("updatedInput") == new, answer.describe()
    assert answer.permission == "allow" and answer.context == ["Target: staging."]


# -- PermissionRequest --------------------------------------------------------------------------


def test_permission_request_allow_with_updated_input_and_permissions(cc: Session) -> None:
    """REF, "PermissionRequest decision control": `behavior` ""allow" grants the
    permission"; `updatedInput` "For "allow" only: modifies the tool's input";
    `updatedPermissions` "For "allow" only: array of permission update entries"; "A hook
    can echo one of the permission_suggestions it received as its own updatedPermissions"."""
    suggestion = payload("PermissionRequest")["permission_suggestions"]
    decision = {"behavior": "allow", "updatedInput": {"command": "npm run lint"},
                "updatedPermissions": suggestion}
    answer = answered(cc, "PermissionRequest", says("PermissionRequest", decision=decision))
    assert answer.request == decision and not answer.blocked, answer.describe()


def test_permission_request_deny_with_message_and_interrupt(cc: Session) -> None:
    """REF: `message` "For "deny" only: tells Claude why the permission was denied";
    `interrupt` "For "deny" only: if true, stops Claude"."""
    decision = {"behavior": "deny", "message": "node_modules stays", "interrupt": True}
    answer = answered(cc, "PermissionRequest", says("PermissionRequest", decision=decision))
    assert answer.blocked and answer.request is not None, answer.describe()
    assert answer.request.get("message") == "node_modules stays"
    assert answer.request.get("interrupt") is True


def test_permission_request_deny_wins_over_allow(cc: Session) -> None:
    """The reference gives no order for PermissionRequest's decisions; these tests assume
    PreToolUse's ("deny > defer > ask > allow") and initd's rule that a guard never passes
    because another hook allowed: one hook allows, one denies, the request is denied."""
    answer = answered(cc, "PermissionRequest",
                      says("PermissionRequest", decision={"behavior": "allow"}),
                      says("PermissionRequest", decision={"behavior": "deny",
                                                          "message": "no"}))
    assert answer.blocked and answer.request == {"behavior": "deny", "message": "no"}, \
        answer.describe()


def test_permission_request_exit_2_with_a_decision_object_denies(cc: Session) -> None:
    """REF: "A hook that exits 2 without a decision object leaves the permission flow
    unchanged, and its stderr is discarded. Only the decision object can grant or deny the
    request." With the object (and exit 2), the object decides."""
    answer = answered(cc, "PermissionRequest", says("PermissionRequest", decision={
        "behavior": "deny"}) + "; exit 2")
    assert answer.blocked, answer.describe()


# -- after a tool --------------------------------------------------------------------------------


@pytest.mark.parametrize("key, value", [
    ("updatedToolOutput", {"filePath": "/path/to/file.txt", "success": True, "note": "[x]"}),
    ("updatedMCPToolOutput", [{"type": "text", "text": "[redacted]"}]),
    ("classifierContext", "This query ran against the staging database."),
])
def test_post_tool_use_rewrites_are_relayed(cc: Session, key: str, value: object) -> None:
    """REF, "PostToolUse decision control": `updatedToolOutput` "Replaces the tool's output
    with the provided value before it is sent to Claude"; `updatedMCPToolOutput` "Replaces
    the output for MCP tools only"; `classifierContext` "Short note about this call's
    result for the auto mode classifier". (The issue: "PostToolUse's updatedToolOutput is
    ignored".)"""
    answer = answered(cc, "PostToolUse", says("PostToolUse", **{key: value}))
    assert answer.specific.get(key) == value, answer.describe()


def test_post_tool_use_block_is_feedback_next_to_the_result(cc: Session) -> None:
    """REF: `decision` ""block" adds the reason next to the tool result. Claude still sees
    the original output"."""
    answer = answered(cc, "PostToolUse", prints({"decision": "block",
                                                 "reason": "Run the formatter"}))
    assert not answer.blocked and "Run the formatter" in (answer.feedback or "")


@pytest.mark.parametrize("how", ["decision", "continue"])
def test_post_tool_batch_block_or_continue_false_stops_the_loop(cc: Session, how: str) -> None:
    """REF, "PostToolBatch decision control": "Returning decision: "block" or continue: false
    stops the agentic loop before the next model call. The blocking message comes from the
    JSON reason or stopReason"."""
    obj = ({"decision": "block", "reason": "batch refused"} if how == "decision"
           else {"continue": False, "stopReason": "batch refused"})
    answer = answered(cc, "PostToolBatch", prints(obj))
    assert answer.blocked and answer.reason == "batch refused", answer.describe()


def test_permission_denied_retry_is_relayed(cc: Session) -> None:
    """REF, "PermissionDenied decision control": "Return a JSON object with
    hookSpecificOutput.retry set to true"; "When retry is true, Claude Code adds a message
    to the conversation telling the model it may retry"."""
    answer = answered(cc, "PermissionDenied", says("PermissionDenied", retry=True))
    assert answer.specific.get("retry") is True, answer.describe()


# -- prompts, sessions, subagents -------------------------------------------------------------


def test_user_prompt_submit_block_title_and_suppression(cc: Session) -> None:
    """REF, "UserPromptSubmit decision control": `decision` ""block" prevents the prompt
    from being processed"; `reason` "Shown to the user"; `sessionTitle` "Sets the session
    title"; `suppressOriginalPrompt` "omits the original prompt text from the block
    message"."""
    answer = answered(cc, "UserPromptSubmit", prints({
        "decision": "block", "reason": "No secrets in prompts",
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "sessionTitle": "t",
                               "suppressOriginalPrompt": True}}))
    assert answer.blocked and answer.reason == "No secrets in prompts", answer.describe()
    assert answer.specific.get("sessionTitle") == "t"
    assert answer.specific.get("suppressOriginalPrompt") is True


def test_user_prompt_expansion_block_and_context(cc: Session) -> None:
    """REF, "UserPromptExpansion decision control": `decision` ""block" prevents the command
    from expanding"; `additionalContext` "String added to Claude's context alongside the
    expanded prompt"."""
    answer = answered(cc, "UserPromptExpansion", prints({
        "decision": "block", "reason": "This slash command is not available",
        "hookSpecificOutput": {"hookEventName": "UserPromptExpansion",
                               "additionalContext": "Checklist: tests, docs."}}))
    assert answer.blocked and answer.reason == "This slash command is not available"
    assert answer.context == ["Checklist: tests, docs."], answer.describe()


def test_session_start_fields_are_relayed(cc: Session) -> None:
    """REF, "SessionStart decision control": `additionalContext`, `initialUserMessage`
    ("String used as the first user message of the session"), `sessionTitle`,
    `watchPaths` ("Array of absolute paths to watch for FileChanged events"),
    `reloadSkills`."""
    fields = {"additionalContext": "Current branch: feat/auth", "sessionTitle": "auth",
              "initialUserMessage": "Continue the refactor", "reloadSkills": True,
              "watchPaths": [str(cc.ws / ".envrc")]}
    answer = answered(cc, "SessionStart", says("SessionStart", **fields))
    assert answer.context == ["Current branch: feat/auth"], answer.describe()
    for key, value in fields.items():
        assert answer.specific.get(key) == value, key


@pytest.mark.parametrize("event", ["Setup", "SubagentStart"])
def test_context_only_events_carry_additional_context(cc: Session, event: str) -> None:
    """REF, "Decision control": "SessionStart, Setup, SubagentStart: Context only:
    hookSpecificOutput.additionalContext adds context for Claude"."""
    answer = answered(cc, event, says(event, additionalContext="Dependencies installed"))
    assert answer.context == ["Dependencies installed"] and not answer.blocked


@pytest.mark.parametrize("event", ["Stop", "SubagentStop"])
def test_stop_additional_context_is_feedback_not_a_block(cc: Session, event: str) -> None:
    """REF, "Stop decision control": `hookSpecificOutput.additionalContext` "Non-error
    feedback for Claude. The conversation continues ... unlike decision: "block" it is
    shown in the transcript as hook feedback rather than a hook error"."""
    answer = answered(cc, event, says(event, additionalContext="Run the test suite first"))
    assert answer.context == ["Run the test suite first"] and not answer.blocked


# -- tasks, config, files, MCP, display ---------------------------------------------------------


def test_task_created_block_cancels_the_task(cc: Session) -> None:
    """REF, "TaskCreated decision control": "JSON {"decision": "block", "reason": "..."}:
    Claude Code returns reason as the message" and "deletes the task"."""
    answer = answered(cc, "TaskCreated", prints({"decision": "block",
                                                 "reason": "Subject needs [TICKET-n]"}))
    assert answer.blocked and answer.reason == "Subject needs [TICKET-n]"


def test_config_change_block_holds_the_change_back(cc: Session) -> None:
    """REF, "ConfigChange decision control": `decision` ""block" prevents the configuration
    change from being applied"."""
    answer = answered(cc, "ConfigChange", prints({"decision": "block", "reason": "admins"}))
    assert answer.blocked, answer.describe()


def test_a_policy_settings_change_cannot_be_blocked(cc: Session) -> None:
    """REF, "ConfigChange decision control": "policy_settings changes can't be blocked.
    Hooks still fire for policy_settings sources ... but any blocking decision is ignored."
    initd's answer for that source does not block (exit 2 nor decision)."""
    answer = answered(cc, "ConfigChange", prints({"decision": "block"}) + "; exit 2",
                      source="policy_settings",
                      file_path="/etc/claude-code/managed-settings.json")
    assert not answer.blocked, answer.describe()


@pytest.mark.parametrize("event", ["CwdChanged", "FileChanged"])
def test_watch_paths_are_relayed(cc: Session, event: str) -> None:
    """REF, "CwdChanged output" / "FileChanged output": `watchPaths` "Array of absolute
    paths. Replaces the current dynamic watch list"; "Claude Code reads watchPaths and
    systemMessage from their JSON output"."""
    paths = [str(cc.ws / ".envrc"), str(cc.ws / ".env")]
    answer = answered(cc, event, prints({"systemMessage": "direnv reloaded",
                                         "hookSpecificOutput": {"hookEventName": event,
                                                                "watchPaths": paths}}))
    assert answer.specific.get("watchPaths") == paths and \
        answer.system_message == "direnv reloaded", answer.describe()


@pytest.mark.parametrize("event, action, content", [
    ("Elicitation", "accept", {"username": "alice"}),
    ("Elicitation", "decline", None),
    ("ElicitationResult", "decline", {}),
    ("ElicitationResult", "accept", {"username": "bob"}),
])
def test_elicitation_action_and_content(cc: Session, event: str, action: str,
                                        content: dict[str, Any] | None) -> None:
    """REF, "Elicitation output": `action` "accept, decline, cancel", `content` "Form field
    values to submit. Only used when action is accept"; "ElicitationResult output":
    "Overrides the user's action", "Overrides form field values"."""
    more = {"content": content} if content is not None else {}
    answer = answered(cc, event, says(event, action=action, **more))
    assert answer.action == action, answer.describe()
    if content is not None:
        assert answer.specific.get("content") == content


def test_message_display_content_is_relayed(cc: Session) -> None:
    """REF, "MessageDisplay output": `displayContent` "Text displayed in place of the
    delta"."""
    answer = answered(cc, "MessageDisplay", says("MessageDisplay",
                                                 displayContent="Here is the plan\n"))
    assert answer.specific.get("displayContent") == "Here is the plan\n", answer.describe()
