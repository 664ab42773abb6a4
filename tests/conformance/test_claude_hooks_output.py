"""Claude Code hooks, what a hook's answer means: exit codes, JSON on stdout, how the
answers of several hooks merge, and the bounded Stop loop; each case as Claude Code's
public hooks reference states it (claude_hooks_support.HOOKS, the revision of 2026-08-22
unless a case says otherwise), quoted in its docstring.

initd's own contract adds one rule the reference does not have: a guard never passes
because of initd, so an answer initd cannot parse is that hook's error (and a blockable
event is blocked), where Claude Code would read it as plain text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import (
    PAYLOADS,
    Session,
    command,
    group,
    hooks,
    one_result,
    q,
    session_fixture,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cc(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def answering(cc: Session, event: str, *commands: str) -> None:
    """The event's hooks: one handler per command, in one matcher group."""
    cc.project(hooks(**{event: group(*(command(text) for text in commands))}))


def printing(obj: dict[str, Any] | str, code: int = 0, stderr: str = "") -> str:
    """A command that prints ``obj`` (JSON unless a str) and exits ``code``."""
    text = obj if isinstance(obj, str) else json.dumps(obj)
    err = f"printf '%s' {q(stderr)} >&2; " if stderr else ""
    return f"cat >/dev/null; {err}printf '%s' {q(text)}; exit {code}"


def deny(reason: str = "no") -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


# -- exit codes --------------------------------------------------------------------------------

BLOCKABLE = ["PreToolUse", "UserPromptSubmit", "Stop", "SubagentStop", "TeammateIdle",
             "TaskCompleted", "PreCompact"]


@pytest.mark.parametrize("event", BLOCKABLE)
def test_exit_2_blocks_with_stderr_as_the_reason(cc: Session, event: str) -> None:
    """HOOKS, "Exit code 2": "Exit 2 means a blocking error. ... The blocking message is
    the reason from your JSON's blocking decision when it makes one, and your stderr text
    otherwise." "Exit code 2 behavior per event" (Can block? Yes): PreToolUse "Blocks the
    tool call"; UserPromptSubmit "Blocks prompt processing and erases the prompt"; Stop
    "Prevents Claude from stopping, continues the conversation"; SubagentStop "Prevents the
    subagent from stopping"; TeammateIdle "Prevents the teammate from going idle";
    TaskCompleted "Prevents the task from being marked as completed"; PreCompact "Blocks
    compaction" ("Exit with code 2 to block compaction."; the old revision had "N/A" for
    PreCompact). PreToolUse: "A hook that blocks by exiting 2 routes the same way as
    "deny"". `initd emit` exits 2 on a block."""
    answering(cc, event, printing("", 2, stderr="not like this"))
    cc.start()
    outcome = cc.post(event)
    assert outcome["blocked"] is True, outcome
    assert "not like this" in (outcome["reason"] or "")
    if event == "PreToolUse":
        assert outcome["permissionDecision"] == "deny"
    assert cc.emit(event).returncode == 2


@pytest.mark.parametrize("event", ["PostToolUse", "PostToolUseFailure"])
def test_exit_2_after_a_tool_ran_is_feedback_not_a_block(cc: Session, event: str) -> None:
    """HOOKS, "Exit code 2 behavior per event": PostToolUse "No: Shows stderr to Claude;
    the tool already ran"; PostToolUseFailure "No: Shows stderr to Claude; the tool already
    failed"."""
    answering(cc, event, printing("", 2, stderr="lint failed"))
    cc.start()
    outcome = cc.post(event)
    assert outcome["blocked"] is False
    assert "lint failed" in (outcome["feedback"] or ""), outcome
    assert cc.emit(event).returncode == 0


@pytest.mark.parametrize("event", ["SessionStart", "SessionEnd", "Notification"])
def test_exit_2_on_an_event_that_cannot_block_blocks_nothing(cc: Session, event: str) -> None:
    """HOOKS, "Exit code 2 behavior per event": Notification "No: Exit code and stderr are
    ignored"; SessionStart "No: Shows stderr to user only"; SessionEnd "No: Shows stderr to
    user only"."""
    answering(cc, event, printing("", 2, stderr="meh"))
    cc.start()
    assert cc.post(event)["blocked"] is False
    assert cc.emit(event).returncode == 0


@pytest.mark.parametrize("event", ["PreToolUse", "UserPromptSubmit", "Stop"])
@pytest.mark.parametrize("code", [1, 3])
def test_any_other_exit_code_is_a_non_blocking_error(cc: Session, event: str,
                                                     code: int) -> None:
    """HOOKS, "Other exit codes": "With stdout that Claude Code treats as plain text, or
    with empty stdout, it's a non-blocking error for most hook events: the action proceeds,
    and the transcript shows a `<hook name> hook error` notice followed by the first line
    of stderr". Warning: "Claude Code treats exit code 1 as a non-blocking error and
    proceeds with the action, even though 1 is the conventional Unix failure code." """
    answering(cc, event, printing("", code, stderr="broken"))
    cc.start()
    outcome = cc.post(event)
    assert outcome["blocked"] is False
    result = one_result(outcome, "broken")
    assert result["exitCode"] == code
    assert result["status"] in ("failed", "error")
    assert cc.emit(event).returncode == 0


def test_a_hook_that_cannot_start_is_a_non_blocking_error(cc: Session) -> None:
    """HOOKS, "Other exit codes": "A hook that can't start lands in the same non-blocking
    bucket. When the script path doesn't exist or isn't executable, the shell exits with a
    code like 127 and you see the same notice with the interpreter's message ... For most
    hook events, the action proceeds." """
    answering(cc, "PreToolUse", "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/missing.sh")
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["blocked"] is False
    assert one_result(outcome, "missing.sh")["exitCode"] == 127


def test_exit_0_without_output_decides_nothing(cc: Session) -> None:
    """HOOKS, "How a hook resolves": "Exit code 0 with no output means the hook has no
    decision to report, so the tool call continues through the normal permission flow. The
    hook can deny the call, but staying silent doesn't approve it." """
    answering(cc, "PreToolUse", "cat >/dev/null")
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["blocked"] is False
    assert outcome["permissionDecision"] is None
    assert cc.emit("PreToolUse").returncode == 0


def test_exit_2_blocks_even_when_its_json_says_allow(cc: Session) -> None:
    """HOOKS, "Exit code 2": "On events that can block, exit 2 blocks whether or not you
    print JSON: even a JSON `permissionDecision` of "allow" can't override it." (The old
    revision: "JSON in `stdout` is **not** processed for exit code 2"; both block.)"""
    allow = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                    "permissionDecision": "allow"}}
    answering(cc, "PreToolUse", printing(allow, 2, stderr="blocked by exit 2"))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["blocked"] is True
    assert outcome["permissionDecision"] == "deny"
    assert "blocked by exit 2" in (outcome["reason"] or "")


def test_exit_2_takes_the_reason_of_its_json_block_decision(cc: Session) -> None:
    """HOOKS, "Exit code 2" (current revision, since 2026-08-11): "The blocking message is
    the reason from your JSON's blocking decision when it makes one, and your stderr text
    otherwise." (The old revision used stderr only: "JSON in `stdout` is **not**
    processed for exit code 2".)"""
    answering(cc, "Stop", printing({"decision": "block", "reason": "json reason"}, 2,
                                   stderr="stderr reason"))
    cc.start()
    outcome = cc.post("Stop")
    assert outcome["blocked"] is True
    assert outcome["reason"] == "json reason"


def test_other_exit_code_with_valid_json_lets_the_json_decide(cc: Session) -> None:
    """HOOKS, "Exit code output" (current revision, since 2026-08-11): "Claude Code reads
    JSON output fields from stdout on every exit code, not just 0"; "Other exit codes":
    "With a parsed object that passes schema validation, for events that use the standard
    decision model, Claude Code ignores the exit code and the JSON alone decides the
    outcome: Each field the event supports is honored, including `permissionDecision` ...
    and the hook isn't reported as an error." (The old revision: "JSON output is only
    processed when the hook exits with code 0".)"""
    answering(cc, "PreToolUse", printing(deny("json on exit 1"), 1))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["blocked"] is True
    assert outcome["permissionDecision"] == "deny"
    assert outcome["reason"] == "json on exit 1"


# -- JSON on exit 0 ----------------------------------------------------------------------------


def test_permission_decision_deny_blocks_with_its_reason(cc: Session) -> None:
    """HOOKS, "PreToolUse decision control": `permissionDecision` ""deny" prevents the tool
    call"; `permissionDecisionReason` "For "deny", shown to Claude"."""
    answering(cc, "PreToolUse", printing(deny("Database writes are not allowed")))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["blocked"] is True
    assert outcome["permissionDecision"] == "deny"
    assert outcome["reason"] == "Database writes are not allowed"
    assert cc.emit("PreToolUse").returncode == 2


@pytest.mark.parametrize("decision", ["allow", "ask"])
def test_permission_decision_allow_and_ask_are_reported_with_their_reason(
        cc: Session, decision: str) -> None:
    """HOOKS, "PreToolUse decision control": ""allow" skips the permission prompt ...
    "ask" prompts the user to confirm"; `permissionDecisionReason` "For "allow" and "ask",
    shown to the user but not Claude"."""
    answering(cc, "PreToolUse", printing({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": decision,
        "permissionDecisionReason": f"because {decision}"}}))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["blocked"] is False
    assert outcome["permissionDecision"] == decision
    assert f"because {decision}" in f"{outcome['reason']} {outcome['systemMessage']}"


@pytest.mark.parametrize("old, new, blocked", [("approve", "allow", False),
                                               ("block", "deny", True)])
def test_the_deprecated_decision_field_maps_to_permission_decision(
        cc: Session, old: str, new: str, blocked: bool) -> None:
    """HOOKS, "PreToolUse decision control", Note: "PreToolUse previously used top-level
    `decision` and `reason` fields, but these are deprecated for this event. ... The
    deprecated values "approve" and "block" map to "allow" and "deny" respectively." """
    answering(cc, "PreToolUse", printing({"decision": old, "reason": "old style"}))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["permissionDecision"] == new
    assert outcome["blocked"] is blocked


def test_updated_input_is_returned(cc: Session) -> None:
    """HOOKS, "PreToolUse decision control": `updatedInput` "Modifies the tool's input
    parameters before execution. Replaces the entire input object"."""
    new = {"command": "npm test -- --bail", "description": "rewritten"}
    answering(cc, "PreToolUse", printing({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": new}}))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["updatedInput"] == new
    assert outcome["permissionDecision"] == "allow"


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse", "PostToolUseFailure",
                                   "UserPromptSubmit", "SessionStart"])
def test_additional_context_is_returned(cc: Session, event: str) -> None:
    """HOOKS, "Add context for Claude": "The `additionalContext` field passes a string from
    your hook into Claude's context window. ... Return `additionalContext` inside
    `hookSpecificOutput` alongside the event name"; it appears for SessionStart "at the
    start of the conversation", UserPromptSubmit "alongside the submitted prompt",
    PreToolUse, PostToolUse, PostToolUseFailure "next to the tool result"."""
    answering(cc, event, printing({"hookSpecificOutput": {
        "hookEventName": event, "additionalContext": "The deployment target is staging."}}))
    cc.start()
    outcome = cc.post(event)
    assert outcome["additionalContext"] == "The deployment target is staging."
    assert outcome["blocked"] is False


def test_every_hooks_additional_context_reaches_claude(cc: Session) -> None:
    """HOOKS, "Add context for Claude": "When several hooks return `additionalContext` for
    the same event, Claude receives all of the values." """
    answering(cc, "UserPromptSubmit", *(printing({"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit", "additionalContext": text}})
        for text in ("Branch: main.", "CI is red.")))
    cc.start()
    context = cc.post("UserPromptSubmit")["additionalContext"] or ""
    assert "Branch: main." in context and "CI is red." in context


@pytest.mark.parametrize("event, context", [("UserPromptSubmit", True), ("SessionStart", True),
                                            ("PreToolUse", False), ("PostToolUse", False),
                                            ("Stop", False)])
def test_plain_stdout_is_context_only_on_prompt_and_session_start(cc: Session, event: str,
                                                                  context: bool) -> None:
    """HOOKS, "Exit code 0": "For most events, stdout is written to the debug log but not
    shown in the transcript. The exceptions are `UserPromptSubmit`, `UserPromptExpansion`,
    and `SessionStart`, where Claude Code adds plain-text stdout as context that Claude can
    see and act on." """
    answering(cc, event, "cat >/dev/null; echo 'Reminder: use Bun, not npm.'")
    cc.start()
    outcome = cc.post(event)
    assert outcome["blocked"] is False
    if context:
        assert "Reminder: use Bun, not npm." in (outcome["additionalContext"] or "")
    else:
        assert outcome["additionalContext"] is None


def test_stdout_that_does_not_start_with_a_brace_is_plain_text(cc: Session) -> None:
    """HOOKS, "Exit code 0": "Whether Claude Code reads your stdout as JSON output or as
    plain text depends on its first character, ignoring leading whitespace: ... **Starts
    with anything else**: Claude Code treats it as plain text, a JSON array or a quoted
    JSON string included." """
    cc.project(hooks(UserPromptSubmit=group(command(printing('["deny"]'))),
                     PreToolUse=group(command(printing('"deny"')))))
    cc.start()
    prompt = cc.post("UserPromptSubmit")
    assert prompt["blocked"] is False and '["deny"]' in (prompt["additionalContext"] or "")
    tool = cc.post("PreToolUse")
    assert tool["blocked"] is False and tool["permissionDecision"] is None
    assert one_result(tool, "deny")["status"] == "ok"


def test_json_after_leading_whitespace_is_json(cc: Session) -> None:
    """HOOKS, "Exit code 0": "depends on its first character, ignoring leading whitespace:
    **Starts with `{`**: Claude Code parses it as JSON." """
    answering(cc, "PreToolUse", printing("\n   " + json.dumps(deny("spaced"))))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["blocked"] is True and outcome["reason"] == "spaced"


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop", "SubagentStop", "PreCompact"])
def test_decision_block_blocks_with_its_reason(cc: Session, event: str) -> None:
    """HOOKS, "Decision control": "UserPromptSubmit, ..., Stop, SubagentStop, ConfigChange,
    PreCompact: Top-level `decision`: `decision: "block"`, `reason`". UserPromptSubmit:
    ""block" prevents the prompt from being processed"; Stop: ""block" prevents Claude from
    stopping"; PreCompact: "You can also block by returning JSON with `"decision":
    "block"`."""
    answering(cc, event, printing({"decision": "block", "reason": "Tests must pass first"}))
    cc.start()
    outcome = cc.post(event)
    assert outcome["blocked"] is True
    assert outcome["reason"] == "Tests must pass first"


def test_decision_block_after_a_tool_is_feedback(cc: Session) -> None:
    """HOOKS, "PostToolUse decision control": `decision` ""block" adds the `reason` next to
    the tool result. Claude still sees the original output"; `reason` "Explanation shown to
    Claude when `decision` is "block"". The tool already ran: nothing to block."""
    answering(cc, "PostToolUse", printing({"decision": "block", "reason": "Run the formatter"}))
    cc.start()
    outcome = cc.post("PostToolUse")
    assert outcome["blocked"] is False
    assert "Run the formatter" in (outcome["feedback"] or "")


def test_continue_false_stops_claude_over_any_decision(cc: Session) -> None:
    """HOOKS, "JSON output": `continue` "If `false`, Claude stops processing entirely after
    the hook runs. Takes precedence over any event-specific decision fields"; `stopReason`
    "Message shown to the user when `continue` is `false`". `initd emit` exits 3 for a
    Claude Code `continue: false` (docs/claude-code.md)."""
    answering(cc, "PreToolUse", printing({
        "continue": False, "stopReason": "Build failed, fix errors before continuing",
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["continue"] is False
    assert outcome["stopReason"] == "Build failed, fix errors before continuing"
    assert cc.emit("PreToolUse").returncode == 3


def test_continue_false_on_stop_wins_over_its_block(cc: Session) -> None:
    """HOOKS, "JSON output": `continue` "Takes precedence over any event-specific decision
    fields". The old revision: "For `Stop` and `SubagentStop`, this takes precedence over
    any `"decision": "block"` output." So the Stop is not kept going: Claude stops."""
    answering(cc, "Stop", printing({"continue": False, "stopReason": "enough",
                                    "decision": "block", "reason": "keep going"}))
    cc.start()
    outcome = cc.post("Stop")
    assert outcome["continue"] is False and outcome["stopReason"] == "enough"
    assert outcome["blocked"] is False
    assert cc.emit("Stop").returncode == 3


@pytest.mark.parametrize("event", ["TeammateIdle", "TaskCompleted"])
def test_continue_false_stops_a_teammate(cc: Session, event: str) -> None:
    """HOOKS, "TeammateIdle decision control" / "TaskCompleted decision control": "JSON
    `{"continue": false, "stopReason": "..."}`: stops the teammate entirely, matching `Stop`
    hook behavior. The `stopReason` is shown to the user." """
    answering(cc, event, printing({"continue": False, "stopReason": "teammate done"}))
    cc.start()
    outcome = cc.post(event)
    assert outcome["continue"] is False and outcome["stopReason"] == "teammate done"


def test_system_message_is_returned(cc: Session) -> None:
    """HOOKS, "JSON output": `systemMessage` "Warning message shown to the user"."""
    answering(cc, "PreToolUse", printing({"systemMessage": "Heads up: prod credentials"}))
    cc.start()
    assert cc.post("PreToolUse")["systemMessage"] == "Heads up: prod credentials"


def test_suppress_output_is_accepted_and_the_rest_of_the_answer_applies(cc: Session) -> None:
    """HOOKS, "JSON output": `suppressOutput` "Has no effect: Claude Code accepts the field
    but doesn't act on it." (The old revision: "Hide stdout from transcript mode".) Either
    way the field is valid JSON output: the answer it rides with still decides."""
    answering(cc, "PreToolUse", printing({"suppressOutput": True, **deny("quiet deny")}))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["blocked"] is True and outcome["reason"] == "quiet deny"
    assert one_result(outcome, "quiet deny")["error"] is None


def test_stop_additional_context_continues_the_conversation(cc: Session) -> None:
    """HOOKS, "Stop decision control": `hookSpecificOutput.additionalContext` "Non-error
    feedback for Claude. The conversation continues so Claude can act on it"; "It keeps the
    conversation going through the same loop protections as `decision: "block"`, namely the
    `stop_hook_active` input and the 8-consecutive-continuation cap". So the next Stop's
    hooks read `stop_hook_active: true`."""
    seen = cc.out / "stop.json"
    cc.project(hooks(Stop=group(command(
        f"cat > {q(seen)}; printf '%s' "
        + q(json.dumps({"hookSpecificOutput": {"hookEventName": "Stop",
                                               "additionalContext": "Run the tests first"}})))
    )))
    cc.start()
    outcome = cc.post("Stop")
    assert outcome["additionalContext"] == "Run the tests first"
    cc.post("Stop")
    assert json.loads(seen.read_text()).get("stop_hook_active") is True


# -- an answer initd cannot read (initd's contract: the hook's error) --------------------------


@pytest.mark.parametrize("stdout", [
    '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"',
    '{"decision": "block", "reason": "cut off here',
    "{not json at all}",
], ids=["cut-off-deny", "cut-off-block", "not-json"])
def test_json_that_cannot_be_parsed_is_the_hooks_error_and_a_guard_does_not_pass(
        cc: Session, stdout: str) -> None:
    """HOOKS, "Exit code 0": "**Starts with `{`**: Claude Code parses it as JSON. If it
    isn't valid JSON, Claude Code treats it as plain text." initd's contract (docs/events.md, "A
    guard never passes because of initd"): a stdout that starts with `{` and cannot be read
    is that hook's error, shown as the reference shows an error ("a non-blocking error ...
    a `<hook name> hook error` notice"), and a blockable event is not let through because
    of it."""
    answering(cc, "PreToolUse", printing(stdout))
    cc.start()
    outcome = cc.post("PreToolUse")
    result = outcome["results"][0]
    assert result["error"] and result["status"] != "ok", result
    assert outcome["blocked"] is True


def test_json_that_cannot_be_parsed_after_a_tool_is_an_error_that_blocks_nothing(
        cc: Session) -> None:
    """As above, on an event that cannot block (HOOKS, "Exit code 2 behavior per event":
    PostToolUse "Can block? No"): the error is shown, nothing is blocked."""
    answering(cc, "PostToolUse", printing('{"decision": "block", "reason": "cut'))
    cc.start()
    outcome = cc.post("PostToolUse")
    result = outcome["results"][0]
    assert result["error"] and result["status"] != "ok", result
    assert outcome["blocked"] is False


# -- several hooks: how their answers merge ----------------------------------------------------


@pytest.mark.parametrize("decisions, winner", [
    (["allow", "ask", "deny"], "deny"),
    (["deny", "allow"], "deny"),
    (["allow", "ask"], "ask"),
    (["ask", "allow"], "ask"),
    (["allow", "allow"], "allow"),
])
def test_permission_decisions_merge_deny_over_ask_over_allow(
        cc: Session, decisions: list[str], winner: str) -> None:
    """HOOKS, "PreToolUse decision control": "When multiple PreToolUse hooks return
    different decisions, precedence is `deny` > `defer` > `ask` > `allow`." """
    answering(cc, "PreToolUse", *(printing({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": decision,
        "permissionDecisionReason": f"{decision} #{n}"}}) for n, decision in
        enumerate(decisions)))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["permissionDecision"] == winner
    assert outcome["blocked"] is (winner == "deny")


def test_every_blocking_hooks_reason_is_kept(cc: Session) -> None:
    """HOOKS, "Hook handler fields": "All matching hooks run in parallel."; "Exit code 2":
    "your stderr text" is the blocking message; "PreToolUse decision control": "A hook that
    blocks by exiting 2 routes the same way as "deny": Claude sees the stderr message as the
    denial reason." Two guards that both block both ran, and Claude is told both reasons
    (the first does not hide the second)."""
    answering(cc, "PreToolUse", printing("", 2, stderr="reason one: no rm"),
              printing(deny("reason two: no network")))
    cc.start()
    reason = cc.post("PreToolUse")["reason"] or ""
    assert "reason one: no rm" in reason and "reason two: no network" in reason


# -- the Stop loop -----------------------------------------------------------------------------


@pytest.mark.timeout(180)
def test_stop_is_blocked_8_times_in_a_row_at_most(cc: Session) -> None:
    """HOOKS, "Stop input" (current revision, since 2026-05): "Claude Code overrides the
    hook and ends the turn after 8 consecutive blocks." "Stop decision control": "the
    8-consecutive-continuation cap". GUIDE: "Claude Code overrides a Stop hook after it
    blocks eight times in a row without progress." (The old revision gave no cap.)

    A Stop hook that always blocks: Stops 1 to 8 are blocked, the 9th goes through. The
    turn ended, so after the user's next prompt the count starts again: the next Stop is
    blocked and reads `stop_hook_active: false`."""
    seen = cc.out / "stop.json"
    answering(cc, "Stop", f"cat > {q(seen)}; echo 'not done yet' >&2; exit 2")
    cc.start()
    blocked = [cc.post("Stop")["blocked"] for _ in range(9)]
    assert blocked == [True] * 8 + [False], blocked
    cc.post("UserPromptSubmit", PAYLOADS["UserPromptSubmit"])
    again = cc.post("Stop")
    assert again["blocked"] is True
    assert json.loads(seen.read_text()).get("stop_hook_active") is False
