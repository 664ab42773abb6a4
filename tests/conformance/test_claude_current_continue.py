"""Where Claude Code honours a hook's `continue: false` and where it discards it, and what
``initd emit --from claude`` answers when no hook service answers for an event that
guards something. Every case cites REF (https://code.claude.com/docs/en/hooks, the
revision of 2026-08-22, Claude Code v2.1.240).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_current_support import (
    ALL_EVENTS,
    DISCARDS_CONTINUE,
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

STOP = {"continue": False, "stopReason": "Build failed, fix errors before continuing"}
# The events whose section says they take every JSON output field ("All JSON output fields
# are available"), or that say what `continue: false` does there.
HONOURS = ["UserPromptSubmit", "UserPromptExpansion", "PreToolUse", "PostToolUse", "Stop",
           "SubagentStop", "TeammateIdle", "TaskCompleted", "PostToolBatch"]
# The events whose block protects something (a tool call, a permission, a prompt, a command,
# a task, a settings change, an MCP server's request, a worktree): with no service to ask,
# "the answer is the agent's own "blocked"/"deny" answer, never an allow" (issue 37).
GUARDS = ["PreToolUse", "PermissionRequest", "UserPromptSubmit", "UserPromptExpansion",
          "TaskCreated", "ConfigChange", "Elicitation", "ElicitationResult", "WorktreeCreate"]


@pytest.fixture
def cc(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def stopping(cc: Session, event: str) -> None:
    then = f"; echo {q(cc.root)}" if event == "WorktreeCreate" else ""
    cc.project(hooks(**{event: group(command(
        f"cat >/dev/null; printf '%s' {q(json.dumps(STOP))}{then}"))}))


@pytest.mark.parametrize("event", HONOURS)
def test_continue_false_stops_claude_where_it_is_honoured(cc: Session, event: str) -> None:
    """REF, "JSON output": `continue` "If false, Claude stops processing entirely after the
    hook runs. Takes precedence over any event-specific decision fields"; `stopReason`
    "Message shown to the user when continue is false". "For PreToolUse and PostToolUse
    hooks, the stop applies even when the tool call fails"; TeammateIdle / TaskCompleted:
    "JSON {"continue": false, "stopReason": "..."}: stops the teammate entirely";
    PostToolBatch: "continue: false stops the agentic loop"."""
    stopping(cc, event)
    cc.start()
    answer = read_answer(event, emit_from(cc, payload(event, cc)))
    assert answer.stop, answer.describe()
    assert answer.stop_reason == STOP["stopReason"], answer.describe()


@pytest.mark.parametrize("event", sorted(DISCARDS_CONTINUE))
def test_continue_false_is_discarded_where_the_reference_discards_it(cc: Session,
                                                                     event: str) -> None:
    """REF, each event's section: PreCompact "Claude Code discards a PreCompact hook's
    systemMessage and continue fields"; SessionEnd "discards their JSON output fields";
    Notification "discards their systemMessage and continue fields"; PostCompact,
    InstructionsLoaded, ConfigChange, CwdChanged, FileChanged, DirectoryAdded,
    WorktreeCreate, WorktreeRemove, Elicitation, ElicitationResult, MessageDisplay likewise;
    StopFailure "ignores the hook's output"; TaskCreated "Claude Code ignores continue:
    false from this event and Claude keeps working".

    The issue: "`continue: false` from PreCompact, SessionEnd or Notification stops the
    agent although the reference discards it there". So initd's own answer does not stop
    either: `initd emit EVENT` never exits 3 (initd's "stop"), and Claude Code, reading
    `--from claude`'s answer, does not stop."""
    stopping(cc, event)
    cc.start()
    data = payload(event, cc)
    own = cc.emit(event, data)
    assert own.returncode != 3, f"initd emit {event}: {own.returncode} {own.stderr}"
    answer = read_answer(event, emit_from(cc, data))
    assert not answer.stop and answer.problems == [], answer.describe()


def test_continue_false_on_task_created_neither_stops_nor_cancels(cc: Session) -> None:
    """REF, "TaskCreated decision control": "Claude Code ignores continue: false from this
    event and Claude keeps working": the task is created (no block) and Claude goes on."""
    stopping(cc, "TaskCreated")
    cc.start()
    answer = read_answer("TaskCreated", emit_from(cc, payload("TaskCreated", cc)))
    assert not answer.blocked and not answer.stop, answer.describe()


@pytest.mark.parametrize("event", GUARDS)
def test_no_service_is_the_events_own_block(cc: Session, event: str) -> None:
    """The interface (issue 37): "When initd cannot ask its hooks about a guard-capable event
    (no service at the socket), the answer is the agent's own "blocked"/"deny" answer, never
    an allow." In Claude Code's terms (REF "Decision control"): PreToolUse a
    `permissionDecision` of deny (or exit 2); PermissionRequest a `decision` object with
    behavior deny, since "Exit code 2 isn't honored for this event"; UserPromptSubmit,
    UserPromptExpansion, TaskCreated, ConfigChange exit 2 or `decision: "block"`;
    Elicitation / ElicitationResult exit 2 or `action` decline (or cancel); WorktreeCreate a
    non-zero exit ("Hook failure or missing path fails creation")."""
    gone = str(cc.root / "nothing-listens.sock")
    answer = read_answer(event, emit_from(cc, payload(event, cc), socket=gone))
    detail = answer.describe()
    assert answer.problems == [], detail
    if event in ("Elicitation", "ElicitationResult"):
        assert answer.action in ("decline", "cancel"), detail
    else:
        assert answer.blocked, detail
    if event == "PreToolUse":
        assert answer.permission == "deny", detail
    if event == "PermissionRequest":
        assert answer.request is not None and answer.request.get("behavior") == "deny", detail
    if event == "WorktreeCreate":
        assert answer.worktree_path is None, detail


@pytest.mark.parametrize("event", [e for e in ALL_EVENTS if e not in GUARDS])
def test_no_service_on_other_events_is_still_a_valid_answer(cc: Session, event: str) -> None:
    """REF, "JSON output": "Your hook's stdout must contain only the JSON object"; "Exit code
    0": plain text is context on UserPromptSubmit, UserPromptExpansion and SessionStart.
    With no service, initd's answer on an event that guards nothing is still one Claude
    Code reads without a schema error, and adds no text of initd's to Claude's context."""
    gone = str(cc.root / "nothing-listens.sock")
    answer = read_answer(event, emit_from(cc, payload(event, cc), socket=gone))
    assert answer.problems == [] and answer.context == [], answer.describe()
