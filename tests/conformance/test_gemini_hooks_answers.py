"""``initd emit --from gemini`` answers as a Gemini CLI hook answers: exit 0 with only JSON
on stdout, exit 2 with the reason on stderr; decision deny/block/allow, reason,
systemMessage, continue/stopReason and hookSpecificOutput, as the hooks of the project's
``.gemini/settings.json`` answered them.

Reference: https://geminicli.com/docs/hooks/reference (docs/hooks/reference.md as shipped
in @google/gemini-cli@0.61.0 = gemini-cli git 5411f113, 2026-08-21)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.gemini_hooks_support import (
    GUARDS,
    GeminiSession,
    exits,
    group,
    hook,
    payload,
    read_answer,
    says,
    settings,
    tool,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def gs(tmp_path: Path) -> Iterator[GeminiSession]:
    session = GeminiSession(tmp_path)
    try:
        yield session
    finally:
        session.stop()


def guard(gs: GeminiSession, event: str, body: str, matcher: str | None = None) -> None:
    gs.gemini_project(settings(**{event: group(hook(gs.record(event) + "; " + body),
                                               matcher=matcher)}))
    gs.start()


def test_exit_2_blocks_the_tool_with_stderr_as_the_reason(gs: GeminiSession) -> None:
    """REFERENCE BeforeTool: "Exit Code 2 (Block Tool): Prevents execution. Uses stderr as
    the reason sent to the agent." """
    guard(gs, "BeforeTool", exits(2, "rm is not allowed here"), "run_shell_command")
    answer = gs.ask(tool(gs, "run_shell_command", command="rm -rf /tmp/x"))
    assert answer.valid, answer
    assert answer.blocked, answer
    assert "rm is not allowed here" in answer.reason, answer
    assert gs.seen("BeforeTool")["tool_input"] == {"command": "rm -rf /tmp/x"}


@pytest.mark.parametrize("decision", ["deny", "block"])
def test_a_json_deny_or_block_blocks_the_tool_with_its_reason(gs: GeminiSession,
                                                              decision: str) -> None:
    """REFERENCE BeforeTool: "decision: Set to "deny" (or "block") to prevent the tool from
    executing. reason: Required if denied. This text is sent to the agent as a tool
    error"; common output: "decision: "allow" or "deny" (alias "block")". """
    guard(gs, "BeforeTool", says({"decision": decision, "reason": "secrets stay put"}))
    answer = gs.ask(tool(gs, "write_file", file_path=".env", content="K=v"))
    assert answer.valid, answer
    assert answer.blocked, answer
    assert "secrets stay put" in answer.reason, answer


def test_an_allow_is_not_a_block_and_stdout_is_only_json(gs: GeminiSession) -> None:
    """REFERENCE: "0: Success. stdout is parsed as JSON"; "Silence is Mandatory: Your
    script must not print any plain text to stdout other than the final JSON." """
    guard(gs, "BeforeTool", says({"decision": "allow"}))
    answer = gs.ask(tool(gs, "run_shell_command", command="ls"))
    assert answer.code == 0, answer
    assert answer.valid, answer
    assert not answer.blocked and not answer.stop, answer


def test_no_hook_at_all_allows(gs: GeminiSession) -> None:
    """HOOKS "What are hooks?": hooks intercept; an event no hook matches goes on: exit 0,
    and stdout, if any, only JSON."""
    gs.start()
    answer = gs.ask(tool(gs, "read_file", file_path="README.md"))
    assert answer.code == 0 and answer.valid and not answer.blocked, answer


def test_a_system_message_reaches_the_agent(gs: GeminiSession) -> None:
    """REFERENCE common output fields: "systemMessage: Displayed immediately to the user in
    the terminal." """
    guard(gs, "BeforeTool", says({"decision": "deny", "reason": "no",
                                  "systemMessage": "Security scanner blocked operation"}))
    answer = gs.ask(tool(gs, "run_shell_command", command="curl x | sh"))
    assert answer.valid and answer.blocked, answer
    assert "Security scanner blocked operation" in (answer.system_message or ""), answer


def test_continue_false_stops_the_agent_loop_with_its_stop_reason(gs: GeminiSession) -> None:
    """REFERENCE BeforeTool: "continue: Set to false to kill the entire agent loop
    immediately"; "stopReason: Displayed to the user when continue is false". """
    guard(gs, "BeforeTool", says({"continue": False, "stopReason": "budget spent"}))
    answer = gs.ask(tool(gs, "run_shell_command", command="make"))
    assert answer.valid, answer
    assert answer.stop, answer
    assert "budget spent" in answer.stop_reason, answer


def test_tool_input_rewriting_reaches_the_agent(gs: GeminiSession) -> None:
    """REFERENCE BeforeTool: "hookSpecificOutput.tool_input: An object that merges with and
    overrides the model's arguments before execution." """
    guard(gs, "BeforeTool", says({"hookSpecificOutput": {
        "hookEventName": "BeforeTool", "tool_input": {"command": "npm test -- --ci"}}}))
    answer = gs.ask(tool(gs, "run_shell_command", command="npm test"))
    assert answer.valid and not answer.blocked, answer
    assert answer.tool_input is not None, answer
    assert answer.tool_input.get("command") == "npm test -- --ci", answer


@pytest.mark.parametrize("event", ["BeforeAgent", "AfterTool", "SessionStart"])
def test_additional_context_reaches_the_agent(gs: GeminiSession, event: str) -> None:
    """REFERENCE: BeforeAgent "hookSpecificOutput.additionalContext: Text that is appended
    to the prompt for this turn only"; AfterTool "... appended to the tool result";
    SessionStart "hookSpecificOutput.additionalContext ... Injected as the first turn"."""
    guard(gs, event, says({"hookSpecificOutput": {"hookEventName": event,
                                                  "additionalContext": "Recent commits: a1"}}))
    answer = gs.ask(payload(gs, event))
    assert answer.valid and not answer.blocked, answer
    assert "Recent commits: a1" in (answer.context or ""), answer


def test_before_agent_deny_blocks_the_turn(gs: GeminiSession) -> None:
    """REFERENCE BeforeAgent: "decision: Set to "deny" to block the turn and discard the
    user's message"; "Exit Code 2 (Block Turn): ... Same as decision: "deny"." """
    guard(gs, "BeforeAgent", exits(2, "prompt names a secret"))
    answer = gs.ask(payload(gs, "BeforeAgent", prompt="print $AWS_SECRET_ACCESS_KEY"))
    assert answer.valid and answer.blocked, answer
    assert "prompt names a secret" in answer.reason, answer
    assert gs.seen("BeforeAgent")["prompt"] == "print $AWS_SECRET_ACCESS_KEY"


def test_after_agent_deny_asks_for_a_retry_with_the_reason(gs: GeminiSession) -> None:
    """REFERENCE AfterAgent: "decision: Set to "deny" to reject the response and force a
    retry. reason: ... This text is sent to the agent as a new prompt"; "Exit Code 2
    (Retry)"."""
    guard(gs, "AfterAgent", says({"decision": "block", "reason": "Add a Summary section."}))
    answer = gs.ask(payload(gs, "AfterAgent"))
    assert answer.valid and answer.blocked, answer
    assert "Add a Summary section." in answer.reason, answer


def test_after_agent_clear_context_reaches_the_agent(gs: GeminiSession) -> None:
    """REFERENCE AfterAgent: "hookSpecificOutput.clearContext: If true, clears conversation
    history (LLM memory) while preserving UI display." """
    guard(gs, "AfterAgent", says({"hookSpecificOutput": {"hookEventName": "AfterAgent",
                                                         "clearContext": True}}))
    answer = gs.ask(payload(gs, "AfterAgent"))
    assert answer.valid and not answer.blocked, answer
    assert answer.specific.get("clearContext") is True, answer


def test_after_tool_deny_replaces_the_result(gs: GeminiSession) -> None:
    """REFERENCE AfterTool: "decision: Set to "deny" to hide the real tool output from the
    agent. reason: ... This text replaces the tool result sent back to the model." """
    guard(gs, "AfterTool", says({"decision": "deny", "reason": "[output redacted]"}))
    answer = gs.ask(payload(gs, "AfterTool"))
    assert answer.valid and answer.blocked, answer
    assert "[output redacted]" in answer.reason, answer


@pytest.mark.parametrize("event", ["BeforeModel", "AfterModel"])
def test_model_hooks_block_the_turn_on_exit_2(gs: GeminiSession, event: str) -> None:
    """REFERENCE BeforeModel "Exit Code 2 (Block Turn): Aborts the turn and skips the LLM
    call. Uses stderr as the error message."; AfterModel "Exit Code 2 (Block Response):
    Aborts the turn and discards the model's output"."""
    guard(gs, event, exits(2, "model call refused"))
    answer = gs.ask(payload(gs, event))
    assert answer.valid and answer.blocked, answer
    assert "model call refused" in answer.reason, answer


def test_before_model_synthetic_response_reaches_the_agent(gs: GeminiSession) -> None:
    """REFERENCE BeforeModel: "hookSpecificOutput.llm_response: A Synthetic Response object.
    If provided, the CLI skips the LLM call entirely and uses this as the response." """
    synthetic = {"candidates": [{"content": {"role": "model", "parts": ["cached"]},
                                 "finishReason": "STOP"}]}
    guard(gs, "BeforeModel", says({"hookSpecificOutput": {"hookEventName": "BeforeModel",
                                                          "llm_response": synthetic}}))
    answer = gs.ask(payload(gs, "BeforeModel"))
    assert answer.valid and not answer.blocked, answer
    assert answer.specific.get("llm_response") == synthetic, answer


def test_tool_selection_config_reaches_the_agent(gs: GeminiSession) -> None:
    """REFERENCE BeforeToolSelection: "hookSpecificOutput.toolConfig.mode: ("AUTO" | "ANY" |
    "NONE")", "hookSpecificOutput.toolConfig.allowedFunctionNames: (string[])"."""
    guard(gs, "BeforeToolSelection", says({"hookSpecificOutput": {
        "hookEventName": "BeforeToolSelection",
        "toolConfig": {"mode": "ANY", "allowedFunctionNames": ["read_file"]}}}))
    answer = gs.ask(payload(gs, "BeforeToolSelection"))
    assert answer.valid, answer
    config = answer.specific.get("toolConfig") or {}
    assert config.get("mode") == "ANY" and "read_file" in config.get(
        "allowedFunctionNames", []), answer


def test_a_hook_exiting_1_is_a_warning_not_a_block(gs: GeminiSession) -> None:
    """REFERENCE: "Other: Warning. A non-fatal failure occurred; the CLI continues with a
    warning." (HOOKS: "the interaction proceeds using original parameters")."""
    guard(gs, "BeforeTool", exits(1, "linter crashed"))
    answer = gs.ask(tool(gs, "run_shell_command", command="ls"))
    assert answer.valid, answer
    assert not answer.blocked and not answer.stop, answer
    assert gs.runs("BeforeTool") == 1


def test_a_hooks_plain_text_stdout_is_an_allow(gs: GeminiSession) -> None:
    """HOOKS "Pollution = Failure: If stdout contains non-JSON text, parsing will fail. The
    CLI will default to "Allow" and treat the entire output as a systemMessage." initd's
    own answer stays JSON only."""
    guard(gs, "BeforeTool", "echo checking...; echo '{\"decision\": \"deny\"}'")
    answer = gs.ask(tool(gs, "run_shell_command", command="ls"))
    assert answer.valid, answer
    assert not answer.blocked, answer


@pytest.mark.parametrize("event", GUARDS)
def test_without_the_service_a_guard_event_is_blocked(gs: GeminiSession, event: str) -> None:
    """The interface contract: when initd cannot ask its hooks (no service at the socket)
    the answer is the agent's own block (REFERENCE "2: System Block. The action is blocked;
    stderr is used as the rejection reason", or decision "deny"), never an allow."""
    answer = read_answer(event, gs.gemini(payload(gs, event),
                                          socket=str(gs.root / "nobody.sock")))
    assert answer.valid, answer
    assert answer.blocked or answer.stop, answer
