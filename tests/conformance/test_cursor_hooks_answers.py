"""Cursor hooks, what their answers do: a hook's exit code and JSON, run by initd for a
Cursor event, come back to Cursor as the answer Cursor's hooks reference gives them
(HOOKS = https://cursor.com/docs/agent/hooks, revision of 2026-08-24; each case quotes
its passage). The answer is read the way Cursor reads it (cursor_hooks_answers.read_answer)
and, where py-cursor-hooks 0.1.1 models the event, must be valid by its output model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import Session, session_fixture
from tests.conformance.cursor_hooks_answers import Answer, read_answer
from tests.conformance.cursor_hooks_support import (
    GUARD_EVENTS,
    PERMISSION_EVENTS,
    answering,
    emit_from,
    enterprise,
    entry,
    hooks_json,
    payload,
    project,
    user,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cs(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def run(cs: Session, event: str, *definitions: dict[str, Any], **more: Any) -> Answer:
    project(cs, hooks_json(**{event: list(definitions)}))
    cs.start()
    answer = read_answer(event, emit_from(cs, payload(event, cs, **more)))
    # initd's own answer is never a hook failure ("crash, timeout, invalid JSON"): under
    # the shim's failClosed that would block, without it let anything through
    assert not answer.failed and not answer.problems, answer.describe()
    return answer


DENY = {"permission": "deny", "user_message": "blocked by policy 7",
        "agent_message": "policy 7 forbids this; use the staging copy"}


@pytest.mark.parametrize("event", PERMISSION_EVENTS)
def test_a_deny_blocks_with_its_messages(cs: Session, event: str) -> None:
    """HOOKS, beforeShellExecution / beforeMCPExecution "// Output": ``{"permission":
    "allow" | "deny" | "ask", "user_message": "<message shown in client>",
    "agent_message": "<message sent to agent>"}``; preToolUse: "user_message: Message
    shown to the user when the action is denied", "agent_message: Message fed back to the
    agent when the action is denied"; beforeReadFile, subagentStart and beforeTabFileRead
    answer ``permission`` allow/deny too."""
    answer = run(cs, event, entry(answering(cs, "hook", json.dumps(DENY))))
    assert answer.blocked, answer.describe()
    if event not in ("beforeTabFileRead",):  # its output is the permission alone
        assert answer.says("blocked by policy 7"), answer.describe()


@pytest.mark.parametrize("event", GUARD_EVENTS)
def test_exit_2_blocks(cs: Session, event: str) -> None:
    """HOOKS "Command-Based Hooks": "Exit code `2` - Block the action (equivalent to
    returning `permission: "deny"`)"; "Exit code blocking: Exit code 2 from command hooks
    blocks the action (equivalent to returning permission: "deny"). This matches Claude
    Code behavior for compatibility." """
    answer = run(cs, event, entry(f"{cs.record('hook')}; echo 'no, not this' >&2; exit 2"))
    assert cs.runs("hook") == 1
    assert answer.blocked, answer.describe()


@pytest.mark.parametrize("event", ["beforeShellExecution", "beforeMCPExecution"])
def test_ask_is_asked(cs: Session, event: str) -> None:
    """HOOKS, beforeShellExecution / beforeMCPExecution: ``"permission": "allow" | "deny" |
    "ask"``; the reference's block-git.sh answers ``"permission": "ask"`` for gh commands
    ("GitHub CLI command requires permission"). Neither an allow nor a block."""
    ask = {"permission": "ask", "user_message": "gh needs your OK"}
    answer = run(cs, event, entry(answering(cs, "hook", json.dumps(ask))))
    assert answer.permission == "ask" and not answer.blocked, answer.describe()
    assert answer.says("gh needs your OK"), answer.describe()


def test_ask_from_subagent_start_is_a_deny(cs: Session) -> None:
    """HOOKS, subagentStart: "`"ask"` is not supported for `subagentStart` and is treated
    as `"deny"`." """
    answer = run(cs, "subagentStart",
                 entry(answering(cs, "hook", json.dumps({"permission": "ask"}))))
    assert answer.blocked, answer.describe()


@pytest.mark.parametrize("how", ["exit 1", "printf 'not json'; exit 0"])
def test_a_failed_hook_lets_the_action_through(cs: Session, how: str) -> None:
    """HOOKS: "Other exit codes - Hook failed, action proceeds (fail-open by default)";
    beforeShellExecution: "By default, hook failures (crash, timeout, invalid JSON) allow
    the action through (fail-open)"."""
    answer = run(cs, "beforeShellExecution", entry(f"{cs.record('hook')}; {how}"))
    assert cs.runs("hook") == 1
    assert not answer.blocked, answer.describe()


@pytest.mark.parametrize("how", ["exit 1", "printf 'not json'; exit 0", "sleep 60"])
def test_fail_closed_blocks_on_a_failure(cs: Session, how: str) -> None:
    """HOOKS "Per-Script Configuration Options": "failClosed | boolean | false | When
    `true`, hook failures (crash, timeout, invalid JSON) block the action instead of
    allowing it through. Useful for security-critical hooks." (``timeout``: "Execution
    timeout in seconds".)"""
    answer = run(cs, "beforeShellExecution",
                 entry(f"{cs.record('hook')}; {how}", failClosed=True, timeout=2))
    assert answer.blocked, answer.describe()


def test_a_hook_past_its_timeout_is_a_failure(cs: Session) -> None:
    """HOOKS: ``timeout``: "Execution timeout in seconds"; a timeout is a hook failure
    ("hook failures (crash, timeout, invalid JSON) allow the action through"): the action
    goes ahead, long before the hook's own sleep would have ended (this test's limit is
    120 s, the hook's sleep 300 s)."""
    answer = run(cs, "beforeShellExecution", entry(f"{cs.record('hook')}; sleep 300",
                                                   timeout=1))
    assert cs.runs("hook") == 1
    assert not answer.blocked, answer.describe()


def test_pre_tool_use_updated_input(cs: Session) -> None:
    """HOOKS, preToolUse "// Output": ``"updated_input": { "command": "npm ci" }``;
    "updated_input | object (optional) | Modified tool input to use instead"."""
    out = {"permission": "allow", "updated_input": {"command": "npm ci"}}
    answer = run(cs, "preToolUse", entry(answering(cs, "hook", json.dumps(out))))
    assert not answer.blocked, answer.describe()
    assert answer.get("updated_input") == {"command": "npm ci"}, answer.describe()


def test_before_submit_prompt_continue_false_blocks(cs: Session) -> None:
    """HOOKS, beforeSubmitPrompt: "Can prevent submission." Output ``{"continue": true |
    false, "user_message": "<message shown to user when blocked>"}``: "continue: Whether to
    allow the prompt submission to proceed"."""
    out = {"continue": False, "user_message": "no secrets in prompts"}
    answer = run(cs, "beforeSubmitPrompt", entry(answering(cs, "hook", json.dumps(out))))
    assert answer.blocked and answer.says("no secrets in prompts"), answer.describe()


@pytest.mark.parametrize("event", ["stop", "subagentStop"])
def test_followup_message_is_submitted_next(cs: Session, event: str) -> None:
    """HOOKS, stop: "The optional `followup_message` is a string. When provided and
    non-empty, Cursor will automatically submit it as the next user message."
    subagentStop: "followup_message: Auto-continue with this message. Only consumed when
    `status` is `"completed"`." """
    out = {"followup_message": "run the tests again"}
    answer = run(cs, event, entry(answering(cs, "hook", json.dumps(out))))
    assert answer.followup == "run the tests again", answer.describe()


@pytest.mark.parametrize(("limit", "loop_count", "follows"), [
    ({}, 4, True), ({}, 5, False), ({"loop_limit": 2}, 1, True),
    ({"loop_limit": 2}, 2, False), ({"loop_limit": None}, 50, True)])
def test_loop_limit_caps_follow_ups(cs: Session, limit: dict[str, Any], loop_count: int,
                                    follows: bool) -> None:
    """HOOKS, stop: "The `loop_count` field indicates how many times the stop hook has
    already triggered an automatic follow-up for this conversation (starts at 0). The
    default limit is 5 auto follow-ups per script, configurable via the `loop_limit`
    option. Set `loop_limit` to `null` to remove the cap." A hook past its limit gets
    no follow-up submitted."""
    out = {"followup_message": "again"}
    answer = run(cs, "stop", entry(answering(cs, "hook", json.dumps(out)), **limit),
                 loop_count=loop_count)
    assert cs.runs("hook") == 1
    assert (answer.followup == "again") is follows, answer.describe()


def test_session_start_context_and_env(cs: Session) -> None:
    """HOOKS, sessionStart "// Output": ``{"env": {"<key>": "<value>"},
    "additional_context": "<context to add to conversation>"}``; "env: Environment
    variables to set for this session. Available to all subsequent hook executions";
    "Session-scoped environment variables from sessionStart hooks are passed to all
    subsequent hook executions within that session." """
    out = {"env": {"TEAM_POLICY": "strict"}, "additional_context": "the repo uses pnpm"}
    project(cs, hooks_json(
        sessionStart=entry(answering(cs, "start", json.dumps(out))),
        beforeShellExecution=entry(f"{cs.record('later')}; echo \"$TEAM_POLICY\" > "
                                   f"{cs.out}/policy.txt")))
    cs.start()
    answer = read_answer("sessionStart", emit_from(cs, payload("sessionStart", cs)))
    assert "the repo uses pnpm" in str(answer.get("additional_context")), answer.describe()
    emit_from(cs, payload("beforeShellExecution", cs))
    assert (cs.out / "policy.txt").read_text().strip() == "strict"


def test_session_start_does_not_block(cs: Session) -> None:
    """HOOKS, sessionStart: "This hook runs as fire-and-forget; the agent loop does not
    wait for or enforce a blocking response"; "Session creation is not blocked even when
    `continue` is `false`." """
    out = {"continue": False, "user_message": "no"}
    answer = run(cs, "sessionStart", entry(answering(cs, "hook", json.dumps(out))))
    assert cs.runs("hook") == 1
    assert answer.get("continue") is not False, answer.describe()


@pytest.mark.parametrize(("event", "key"), [("postToolUse", "additional_context"),
                                            ("preCompact", "user_message")])
def test_context_and_messages_come_back(cs: Session, event: str, key: str) -> None:
    """HOOKS, postToolUse: "additional_context | string (optional) | Extra context
    injected into the conversation after the tool result"; preCompact: "user_message |
    string (optional) | Message to show to the user when compaction occurs"."""
    answer = run(cs, event, entry(answering(cs, "hook", json.dumps({key: "note 42"}))))
    assert "note 42" in str(answer.get(key)), answer.describe()


def test_every_hook_of_every_source_runs(cs: Session) -> None:
    """HOOKS "Configuration": "All matching hooks from every source run; when responses
    conflict, higher-priority sources take precedence during merge"; "Priority order
    (highest to lowest): Enterprise → Team → Project → User". A deny from the project
    file wins over the user file's allow, and both hooks ran."""
    allow = json.dumps({"permission": "allow"})
    user(cs, hooks_json(beforeShellExecution=entry(answering(cs, "user", allow))))
    project(cs, hooks_json(beforeShellExecution=[
        entry(answering(cs, "first", allow)),
        entry(answering(cs, "second", json.dumps(DENY)))]))
    cs.start()
    answer = read_answer("beforeShellExecution",
                         emit_from(cs, payload("beforeShellExecution", cs)))
    assert [cs.runs(n) for n in ("user", "first", "second")] == [1, 1, 1]
    assert answer.blocked, answer.describe()


def test_the_enterprise_deny_wins_over_the_project_allow(cs: Session) -> None:
    """HOOKS: "Enterprise (MDM-managed, system-wide): ... Linux/WSL:
    `/etc/cursor/hooks.json`"; "Priority order (highest to lowest): Enterprise → Team →
    Project → User"; "when responses conflict, higher-priority sources take precedence"."""
    enterprise(cs, hooks_json(beforeShellExecution=entry(answering(cs, "ent", json.dumps(DENY)))))
    project(cs, hooks_json(beforeShellExecution=entry(
        answering(cs, "proj", json.dumps({"permission": "allow"})))))
    cs.start()
    answer = read_answer("beforeShellExecution",
                         emit_from(cs, payload("beforeShellExecution", cs)))
    assert cs.runs("ent") == 1
    assert answer.blocked and answer.says("blocked by policy 7"), answer.describe()
