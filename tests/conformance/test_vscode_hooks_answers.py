"""VS Code's agent hooks (the Local harness), the answers: what a VS Code hook answers
(exit code, stdout JSON, stderr) comes back from ``initd emit --from vscode`` with the
same meaning, read as VS Code reads it (vscode_hooks_answers.read_answer). Each case
quotes its passage (vscode_hooks_support names the references and their revisions).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import Session, session_fixture
from tests.conformance.vscode_hooks_answers import assert_valid, blocked, read_answer
from tests.conformance.vscode_hooks_support import (
    VSCode,
    answers,
    cmd,
    exits,
    payload,
    shell,
    vhooks,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def vs(tmp_path: Path) -> Iterator[VSCode]:
    for session in session_fixture(tmp_path):
        yield VSCode(session)


def pre(decision: str, reason: str = "", **more: Any) -> str:
    return answers({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                           "permissionDecision": decision,
                                           "permissionDecisionReason": reason, **more}})


def ask(vs: VSCode, event: str, *commands: str, sent: dict[str, Any] | None = None) -> Any:
    """Each command on ``event`` (in one .github/hooks file, in order), the event sent
    through emit; every hook ran, and the answer is valid by VS Code's rules."""
    ran = vs.s.out / "ran.count"
    vs.workspace("h", vhooks(**{event: [cmd(f"echo run >> {ran}; {c}") for c in commands]}))
    vs.s.start()
    answer = read_answer(event, vs.emit(sent or (shell("rm -rf /tmp/x")
                                                  if event == "PreToolUse"
                                                  else payload(event))))
    assert vs.s.runs("ran") == len(commands), "not every hook ran"
    assert_valid(answer)
    return answer


# -- PreToolUse ---------------------------------------------------------------------------


def test_exit_2_denies_the_tool_with_stderr_as_the_reason(vs: VSCode) -> None:
    """LOCAL, "Choose a control mechanism": "Use exit code `2` to block the current
    operation and provide stderr to the model." SRC: "Exit code 2 (error) means deny the
    tool"."""
    answer = ask(vs, "PreToolUse", exits(2, "rm is not allowed here"))
    assert blocked(answer)
    assert "rm is not allowed here" in (answer.reason or "")


@pytest.mark.parametrize("decision", ["deny", "ask", "allow"])
def test_a_permission_decision_comes_back(vs: VSCode, decision: str) -> None:
    """LOCAL, PreToolUse "Output": `permissionDecision` `"allow"`, `"deny"`, or `"ask"`:
    "Allows the tool call, denies it, or requires user confirmation."
    `permissionDecisionReason`: "Reason shown to the user.\""""
    answer = ask(vs, "PreToolUse", pre(decision, f"because {decision}"))
    assert answer.decision == decision
    if decision != "allow":
        assert f"because {decision}" in (answer.reason or "")


@pytest.mark.parametrize("pair,winner", [(("allow", "deny"), "deny"), (("deny", "allow"), "deny"),
                                         (("allow", "ask"), "ask"), (("ask", "deny"), "deny")])
def test_the_most_restrictive_decision_wins(vs: VSCode, pair: tuple[str, str],
                                            winner: str) -> None:
    """LOCAL, PreToolUse: "When multiple hooks return a permission decision for the same
    tool call, the most restrictive decision wins: 1. `deny` blocks the tool call. 1.
    `ask` requires user confirmation. 1. `allow` approves the tool call.\""""
    answer = ask(vs, "PreToolUse", pre(pair[0], pair[0]), pre(pair[1], pair[1]))
    assert answer.decision == winner


def test_exit_2_wins_over_an_allow(vs: VSCode) -> None:
    """SRC executePreToolUseHook: an exit-2 result sets `mostRestrictiveDecision = 'deny'`
    whatever the other hooks said; LOCAL: "the most restrictive outcome takes
    precedence"."""
    answer = ask(vs, "PreToolUse", pre("allow"), exits(2, "blocked by the second"))
    assert blocked(answer) and "blocked by the second" in (answer.reason or "")


def test_every_hooks_additional_context_comes_back(vs: VSCode) -> None:
    """LOCAL, PreToolUse: `additionalContext` "Additional context for the model." SRC:
    "collect all additionalContext" (from every hook)."""
    answer = ask(vs, "PreToolUse", pre("allow", additionalContext="first note"),
                 pre("allow", additionalContext="second note"))
    assert "first note" in " ".join(answer.context)
    assert "second note" in " ".join(answer.context)


def test_updated_input_comes_back_and_the_last_one_wins(vs: VSCode) -> None:
    """LOCAL, PreToolUse: `updatedInput` "Optional replacement tool input." SRC: "last
    updatedInput wins"."""
    first = {"command": "ls", "explanation": "e", "goal": "g", "isBackground": False}
    last = {**first, "command": "ls -la"}
    answer = ask(vs, "PreToolUse", pre("allow", updatedInput=first),
                 pre("allow", updatedInput=last))
    assert answer.updated_input == last


@pytest.mark.parametrize("code", [1, 3, 127])
def test_another_exit_code_is_a_warning_and_decides_nothing(vs: VSCode, code: int) -> None:
    """LOCAL, "Exit codes": "Any other value: Show a non-blocking warning to the user and
    continue processing.\""""
    answer = ask(vs, "PreToolUse", exits(code, "a warning"))
    assert not blocked(answer) and answer.decision in (None, "allow")


def test_plain_text_on_stdout_decides_nothing(vs: VSCode) -> None:
    """LOCAL: exit 0 "Treat the command as successful and process stdout"; SRC
    hookExecutor: stdout that is not JSON is logged ("Hook command returned non-JSON
    output") and has no effect."""
    answer = ask(vs, "PreToolUse", exits(0, out="deny this please"))
    assert not blocked(answer)


def test_an_answer_for_another_event_is_ignored(vs: VSCode) -> None:
    """SRC _toHookResult: "Check hookEventName inside hookSpecificOutput — if mismatched,
    strip hookSpecificOutput but keep the rest." A deny labelled PostToolUse does not
    deny a PreToolUse."""
    answer = ask(vs, "PreToolUse", answers({"hookSpecificOutput": {
        "hookEventName": "PostToolUse", "permissionDecision": "deny"}}))
    assert not blocked(answer)


def test_continue_false_stops_even_with_an_allow(vs: VSCode) -> None:
    """LOCAL, "Choose a control mechanism": "When outputs conflict, the most restrictive
    outcome takes precedence. For example, `continue: false` stops the agent execution
    even if a `PreToolUse` output also permits the tool call." `stopReason`: "Reason shown
    to the user when `continue` is `false`.\""""
    answer = ask(vs, "PreToolUse", answers({"continue": False, "stopReason": "policy",
                                            "hookSpecificOutput": {
                                                "permissionDecision": "allow"}}))
    assert answer.stop and answer.stop_reason == "policy"


def test_a_system_message_comes_back(vs: VSCode) -> None:
    """LOCAL, "Common output": `systemMessage` "Warning message shown to the user."; "Use
    `systemMessage` to show a warning without changing the event decision.\""""
    answer = ask(vs, "PreToolUse", answers({"systemMessage": "Unit tests failed"}))
    assert answer.system_message == "Unit tests failed" and not blocked(answer)


# -- the other events ---------------------------------------------------------------------


@pytest.mark.parametrize("command", [answers({"decision": "block", "reason": "lint errors"}),
                                     exits(2, "lint errors")])
def test_post_tool_use_blocks(vs: VSCode, command: str) -> None:
    """LOCAL, PostToolUse "Output": `decision` `"block"` "Optional decision that blocks
    further processing.", `reason` "Reason provided to the model when processing is
    blocked." SRC: "Exit code 2 (error) means block the tool result"."""
    answer = ask(vs, "PostToolUse", command)
    assert blocked(answer) and "lint errors" in (answer.reason or "")


def test_post_tool_use_adds_context(vs: VSCode) -> None:
    """LOCAL, PostToolUse: `hookSpecificOutput.additionalContext` "Additional context for
    the model.\""""
    answer = ask(vs, "PostToolUse", answers({"hookSpecificOutput": {
        "hookEventName": "PostToolUse", "additionalContext": "The edited file has lint errors."}}))
    assert answer.context == ["The edited file has lint errors."] and not blocked(answer)


@pytest.mark.parametrize("command", [exits(2, "no secrets in prompts"),
                                     answers({"decision": "block",
                                              "reason": "no secrets in prompts"})])
def test_user_prompt_submit_blocks(vs: VSCode, command: str) -> None:
    """LOCAL, "Exit codes": `2` "Treat stderr as a blocking error". SRC
    defaultIntentRequestHandler: a UserPromptSubmit error or `decision: "block"` throws
    HookAbortError (the prompt goes no further)."""
    answer = ask(vs, "UserPromptSubmit", command)
    assert blocked(answer)
    assert "no secrets in prompts" in (answer.reason or answer.stop_reason or "")


@pytest.mark.parametrize("event", ["SessionStart", "SubagentStart", "UserPromptSubmit"])
def test_start_hooks_add_context(vs: VSCode, event: str) -> None:
    """LOCAL, SessionStart "Output": `additionalContext` "Context added to the
    conversation."; SubagentStart: "Context added to the subagent conversation."; SRC
    (UserPromptSubmit): `hookSpecificOutput?.additionalContext`."""
    answer = ask(vs, event, answers({"hookSpecificOutput": {
        "hookEventName": event, "additionalContext": "Project: my-app 2.1.0 | Branch: main"}}))
    assert answer.context == ["Project: my-app 2.1.0 | Branch: main"]
    assert not blocked(answer) and not answer.stop


@pytest.mark.parametrize("event", ["SessionStart", "SubagentStart"])
def test_a_start_hooks_exit_2_stops_nothing(vs: VSCode, event: str) -> None:
    """SRC toolCallingLoop.ts executeSessionStartHook/executeSubagentStartHook:
    "SessionStart blocking errors and stopReason are silently ignored"."""
    answer = ask(vs, event, exits(2, "ignored"))
    assert answer.decision is None and not answer.stop


@pytest.mark.parametrize("event", ["Stop", "SubagentStop"])
@pytest.mark.parametrize("how", ["json", "exit 2"])
def test_a_stop_hook_keeps_the_agent_working(vs: VSCode, event: str, how: str) -> None:
    """LOCAL, Stop "Output": `{"hookSpecificOutput": {"hookEventName": "Stop",
    "decision": "block", "reason": "Run the test suite before finishing."}}`: "Prevents
    the agent execution from stopping." SRC executeStopHook/executeSubagentStopHook read
    `hookSpecificOutput.decision`/`.reason` and collect exit-2 stderr as the blocking
    reason (SubagentStop: LOCAL shows a top-level decision; research note 1)."""
    command = (answers({"hookSpecificOutput": {"hookEventName": event, "decision": "block",
                                               "reason": "Run the test suite first."}})
               if how == "json" else exits(2, "Run the test suite first."))
    answer = ask(vs, event, command)
    assert blocked(answer) and "Run the test suite first." in (answer.reason or "")


def test_a_stop_block_without_a_reason_lets_the_agent_stop(vs: VSCode) -> None:
    """LOCAL, Stop: `reason` "Required when `decision` is `"block"`." SRC: `if
    (specific?.decision === 'block' && specific.reason)`: no reason, no block."""
    answer = ask(vs, "Stop", answers({"hookSpecificOutput": {"hookEventName": "Stop",
                                                             "decision": "block"}}))
    assert not blocked(answer)


def test_stop_hook_active_reaches_the_hook(vs: VSCode) -> None:
    """LOCAL, Stop: `stop_hook_active` "`true` when the agent is already continuing
    because a previous `Stop` hook blocked it.\""""
    vs.workspace("h", vhooks(Stop=cmd(vs.s.record("stop"))))
    vs.s.start()
    vs.emit(payload("Stop", stop_hook_active=True))
    assert vs.s.seen("stop")["stop_hook_active"] is True


# -- no service ---------------------------------------------------------------------------


@pytest.mark.parametrize("event", ["PreToolUse", "UserPromptSubmit"])
def test_without_a_service_a_guard_event_is_blocked(tmp_path: Path, event: str) -> None:
    """Brief, interface (1): "When initd cannot ask its hooks about a guard-capable event
    (no service at the socket), the answer is the agent's own "blocked"/"deny" answer,
    never an allow." (VS Code's: LOCAL, exit 2 or a deny.)"""
    vs = VSCode(Session(tmp_path))
    try:
        sent = shell("rm -rf /tmp/x") if event == "PreToolUse" else payload(event)
        answer = read_answer(event, vs.emit(sent, socket=str(tmp_path / "nobody.sock")))
        assert blocked(answer), answer
        assert_valid(answer)
    finally:
        vs.s.stop()
