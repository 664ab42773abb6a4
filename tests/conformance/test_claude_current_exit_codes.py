"""A hook's exit code, through ``initd emit --from claude``, for each of Claude Code's 31
events: what Claude Code makes of initd's answer must be what it would make of the hook's
own. Every case cites REF (https://code.claude.com/docs/en/hooks, the revision of
2026-08-22, Claude Code v2.1.240), "Exit code output" and "Exit code 2 behavior per event".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_current_support import (
    ALL_EVENTS,
    CAN_BLOCK,
    PLAIN_TEXT_IS_CONTEXT,
    Answer,
    emit_from,
    payload,
    read_answer,
)
from tests.conformance.claude_hooks_support import (
    Session,
    command,
    group,
    hooks,
    q,
    session_fixture,
)

pytestmark = pytest.mark.timeout(120)

CANNOT_BLOCK = [event for event in ALL_EVENTS if event not in CAN_BLOCK]


@pytest.fixture
def cc(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def printing(obj: dict[str, object] | str, code: int = 0, stderr: str = "") -> str:
    text = obj if isinstance(obj, str) else json.dumps(obj)
    err = f"printf '%s' {q(stderr)} >&2; " if stderr else ""
    return f"cat >/dev/null; {err}printf '%s' {q(text)}; exit {code}"


def answered(cc: Session, event: str, *commands: str) -> Answer:
    """``event``'s hooks (one group), the service started, and initd's answer read."""
    cc.project(hooks(**{event: group(*(command(text) for text in commands))}))
    cc.start()
    return read_answer(event, emit_from(cc, payload(event, cc)))


@pytest.mark.parametrize("event", sorted(CAN_BLOCK - {"WorktreeCreate"}))
def test_exit_2_blocks_where_the_event_can_block(cc: Session, event: str) -> None:
    """REF, "Exit code 2": "Exit 2 means a blocking error. On events that can block, exit 2
    blocks whether or not you print JSON"; the table's "Yes" rows: PreToolUse "Blocks the
    tool call", UserPromptSubmit "Blocks prompt processing and erases the prompt",
    UserPromptExpansion "Blocks the expansion", Stop "Prevents Claude from stopping",
    SubagentStop, TeammateIdle, TaskCreated "Rolls back the task creation",
    TaskCompleted, ConfigChange "Blocks the configuration change", PostToolBatch "Stops the
    agentic loop before the next model call", PreCompact "Blocks compaction", Elicitation
    "Denies the elicitation", ElicitationResult "Blocks the response (action becomes
    decline)". "The blocking message is ... your stderr text otherwise"."""
    answer = answered(cc, event, printing("", 2, stderr="not like this"))
    assert answer.blocked, answer.describe()
    if event not in ("Elicitation", "ElicitationResult"):  # "doesn't show your stderr"
        assert "not like this" in (answer.reason or ""), answer.describe()


@pytest.mark.parametrize("event", CANNOT_BLOCK)
def test_exit_2_blocks_nothing_where_the_event_cannot_block(cc: Session, event: str) -> None:
    """REF, "Exit code 2 behavior per event", the "No" rows: PermissionRequest "Exit code 2
    isn't honored for this event and the permission flow proceeds unchanged",
    StopFailure "Output and exit code are ignored", PostToolUse / PostToolUseFailure "Shows
    stderr to Claude", PermissionDenied and Notification "Exit code and stderr are
    ignored", SubagentStart, SessionStart, Setup, SessionEnd, CwdChanged, FileChanged,
    PostCompact "Shows stderr to user only", DirectoryAdded "Stderr goes to the debug
    log", WorktreeRemove "Failures are logged", InstructionsLoaded "Exit code is ignored",
    MessageDisplay "The original text is displayed".

    initd's answer blocks nothing and stops nothing; on PermissionRequest it neither allows
    nor denies (no `decision` object: the flow goes on to the user's dialog, or to Claude
    Code's own deny where none can be shown)."""
    answer = answered(cc, event, printing("", 2, stderr="meh"))
    assert not answer.blocked and not answer.stop, answer.describe()
    assert answer.problems == [], answer.describe()
    if event == "PermissionRequest":
        assert answer.request is None, answer.describe()
    if event in ("PostToolUse", "PostToolUseFailure"):
        assert "meh" in (answer.feedback or ""), answer.describe()  # "Shows stderr to Claude"


def test_worktree_create_fails_on_any_nonzero_exit(cc: Session) -> None:
    """REF, "Exit code 2 behavior per event": WorktreeCreate "Any non-zero exit code causes
    worktree creation to fail"; Warning: "The exception is WorktreeCreate, where any
    non-zero exit code aborts worktree creation." A hook that prints a path and exits 1
    still fails it."""
    answer = answered(cc, "WorktreeCreate", printing(str(cc.root), 1, stderr="svn failed"))
    assert answer.blocked and answer.worktree_path is None, answer.describe()


def test_worktree_create_answers_with_the_hooks_path(cc: Session) -> None:
    """REF, "WorktreeCreate output": "Command hooks ... print the path as the last non-empty
    line of stdout. Claude Code strips ANSI escape codes before reading that line, so shell
    startup banners printed before your echo are ignored." initd's answer is that path."""
    target = cc.root / "worktrees" / "feature-auth"
    target.mkdir(parents=True)
    answer = answered(cc, "WorktreeCreate",
                      f"cat >/dev/null; echo 'Welcome!'; echo {q(target)}; echo")
    assert answer.worktree_path == str(target), answer.describe()


def test_worktree_create_without_a_path_fails(cc: Session) -> None:
    """REF, "WorktreeCreate output": "If the hook fails or produces no path, worktree
    creation fails with an error." A hook that prints nothing: initd's answer must not
    hand Claude Code a path of its own."""
    answer = answered(cc, "WorktreeCreate", "cat >/dev/null")
    assert answer.blocked and answer.worktree_path is None, answer.describe()


def test_stop_failure_ignores_everything_the_hook_says(cc: Session) -> None:
    """REF, "StopFailure": "Claude Code ignores the hook's output and exit code, apart from
    terminalSequence." A hook that exits 2 with a block decision and continue: false:
    nothing is blocked or stopped, and the terminal sequence still reaches Claude Code."""
    bell = "\u0007"
    answer = answered(cc, "StopFailure", printing({
        "decision": "block", "reason": "no", "continue": False, "terminalSequence": bell}, 2))
    assert not answer.blocked and not answer.stop
    assert answer.json is None or answer.json.get("terminalSequence") == bell


@pytest.mark.parametrize("event", ["PreToolUse", "UserPromptSubmit", "Stop", "TaskCreated",
                                   "PostToolBatch"])
def test_exit_1_without_json_is_a_non_blocking_error(cc: Session, event: str) -> None:
    """REF, "Other exit codes": "With stdout that Claude Code treats as plain text, or with
    empty stdout, it's a non-blocking error for most hook events: the action proceeds";
    Warning: "Claude Code treats exit code 1 as a non-blocking error and proceeds with the
    action". initd's answer is not a block."""
    answer = answered(cc, event, printing("", 1, stderr="broken"))
    assert not answer.blocked and not answer.stop, answer.describe()


@pytest.mark.parametrize("event, obj", [
    ("PreToolUse", {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                           "permissionDecision": "deny",
                                           "permissionDecisionReason": "json on exit 1"}}),
    ("UserPromptExpansion", {"decision": "block", "reason": "json on exit 1"}),
    ("TaskCreated", {"decision": "block", "reason": "json on exit 1"}),
    ("ConfigChange", {"decision": "block", "reason": "json on exit 1"}),
])
def test_other_exit_codes_with_valid_json_let_the_json_decide(cc: Session, event: str,
                                                              obj: dict[str, object]) -> None:
    """REF, "Other exit codes": "With a parsed object that passes schema validation, for
    events that use the standard decision model, Claude Code ignores the exit code and the
    JSON alone decides the outcome"."""
    answer = answered(cc, event, printing(obj, 1))
    assert answer.blocked, answer.describe()
    if event != "ConfigChange":  # ConfigChange's reason: "Accepted but never shown"
        assert answer.reason == "json on exit 1", answer.describe()


@pytest.mark.parametrize("event", [*sorted(PLAIN_TEXT_IS_CONTEXT), "Setup", "PreToolUse",
                                   "SubagentStart"])
def test_plain_stdout_is_context_only_where_the_reference_says(cc: Session, event: str) -> None:
    """REF, "Exit code 0": "For most events, stdout is written to the debug log ... The
    exceptions are UserPromptSubmit, UserPromptExpansion, and SessionStart, where Claude
    Code adds plain-text stdout as context"; "Setup decision control": "plain stdout is
    written to the debug log only"."""
    answer = answered(cc, event, "cat >/dev/null; echo 'The deployment target is staging.'")
    if event in PLAIN_TEXT_IS_CONTEXT:
        assert any("The deployment target is staging." in c for c in answer.context), \
            answer.describe()
    else:
        assert answer.context == [], answer.describe()
    assert not answer.blocked and not answer.error


def test_every_hooks_context_reaches_claude(cc: Session) -> None:
    """REF, "Add context for Claude": "When several hooks return additionalContext for the
    same event, Claude receives all of the values." (PostToolBatch, a new event.)"""
    answer = answered(cc, "PostToolBatch", *(printing({"hookSpecificOutput": {
        "hookEventName": "PostToolBatch", "additionalContext": text}})
        for text in ("Branch: main.", "CI is red.")))
    context = "\n".join(answer.context)
    assert "Branch: main." in context and "CI is red." in context, answer.describe()


def test_exit_2_with_invalid_json_still_blocks_with_stderr(cc: Session) -> None:
    """REF, "Exit code 2": "A hook that exits 2 while printing JSON that fails JSON output
    schema validation still blocks: Claude Code uses stderr as the blocking reason"."""
    answer = answered(cc, "UserPromptExpansion",
                      printing({"decision": "maybe"}, 2, stderr="expansion refused"))
    assert answer.blocked and "expansion refused" in (answer.reason or ""), answer.describe()
