"""Cursor hooks through ``initd emit --from cursor``: every event of Cursor's hooks
reference reaches the hooks a ``.cursor/hooks.json`` declares for it, with Cursor's own
input fields; each case cites HOOKS (https://cursor.com/docs/agent/hooks, revision of
2026-08-24) and quotes the passage it follows.

Written from the reference, not from initd's code: a failing case is a place where initd
does not do what a Cursor user's hooks expect.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_hooks_support import Session, session_fixture
from tests.conformance.cursor_hooks_answers import contract_events, input_errors, read_answer
from tests.conformance.cursor_hooks_support import (
    EVENTS,
    GUARD_EVENTS,
    emit_from,
    entry,
    hooks_json,
    payload,
    project,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cs(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


@pytest.mark.parametrize("event", EVENTS)
def test_each_event_reaches_its_hooks_with_cursors_input(cs: Session, event: str) -> None:
    """HOOKS "Common schema": "All hooks receive a base set of fields in addition to their
    hook-specific fields" (conversation_id, generation_id, model, hook_event_name,
    cursor_version, workspace_roots, user_email, transcript_path; workspaceOpen "omits
    conversation_id, generation_id, model, session_id, and transcript_path"), and each
    event's "// Input" example. "Hooks are spawned processes that communicate over stdio
    using JSON in both directions." The hook sees what Cursor sent, field for field."""
    project(cs, hooks_json(**{event: entry(cs.record("hook"))}))
    cs.start()
    sent = payload(event, cs)
    answer = read_answer(event, emit_from(cs, sent))
    seen = cs.seen("hook")
    assert seen["hook_event_name"] == event
    for key, value in sent.items():
        assert seen.get(key) == value, f"{key}: sent {value!r}, the hook saw {seen.get(key)!r}"
    assert cs.runs("hook") == 1
    assert not answer.failed and not answer.problems, answer.describe()
    assert not answer.blocked, answer.describe()


@pytest.mark.parametrize("event", ["beforeShellExecution", "stop", "afterFileEdit"])
def test_unknown_fields_reach_hooks_untouched(cs: Session, event: str) -> None:
    """HOOKS "Common schema" grows (model_id and model_params are newer than the first
    revision: "Structured ID for the selected model, when available"); the interface
    contract of initd issue 37: "Unknown payload fields reach hooks untouched"."""
    project(cs, hooks_json(**{event: entry(cs.record("hook"))}))
    cs.start()
    extra = {"model_id": "claude-opus-4-7",
             "model_params": [{"id": "thinking", "value": "true"}],
             "x_cursor_future": {"nested": [1, "two", None], "flag": False}}
    emit_from(cs, payload(event, cs, **extra))
    seen = cs.seen("hook")
    for key, value in extra.items():
        assert seen.get(key) == value


def test_the_event_argument_wins_over_the_payload_name(cs: Session) -> None:
    """``initd emit --from cursor EVENT``: "The event is the payload's own event-name
    field (as the agent names it); EVENT, when given, wins" (issue 37's interface
    contract). Cursor's field is hook_event_name (HOOKS "Common schema": "Which hook is
    being run")."""
    project(cs, hooks_json(beforeShellExecution=entry(cs.record("before")),
                           afterShellExecution=entry(cs.record("after"))))
    cs.start()
    sent = payload("beforeShellExecution", cs, hook_event_name="afterShellExecution")
    emit_from(cs, sent, "beforeShellExecution")
    assert cs.runs("before") == 1 and cs.runs("after") == 0
    assert cs.seen("before")["command"] == "npm install"


def test_the_socket_flag_names_the_service(cs: Session) -> None:
    """``initd emit --from cursor [EVENT] [--socket PATH]``: "The socket is --socket or
    $INITD_SOCKET" (issue 37's interface contract)."""
    project(cs, hooks_json(beforeSubmitPrompt=entry(cs.record("hook"))))
    cs.start()
    proc = emit_from(cs, payload("beforeSubmitPrompt", cs), use_flag=True)
    assert cs.runs("hook") == 1, proc.stderr
    assert not read_answer("beforeSubmitPrompt", proc).blocked


@pytest.mark.parametrize("event", GUARD_EVENTS)
def test_a_silent_hook_lets_the_action_go_ahead(cs: Session, event: str) -> None:
    """HOOKS: "Exit code `0` - Hook succeeded, use the JSON output"; a hook that reads its
    input and exits 0 (the Quickstart's "Read input, do something, exit 0") blocks
    nothing."""
    project(cs, hooks_json(**{event: entry(f"{cs.record('hook')}; exit 0")}))
    cs.start()
    answer = read_answer(event, emit_from(cs, payload(event, cs)))
    assert cs.runs("hook") == 1
    assert not answer.blocked and not answer.failed and not answer.problems, answer.describe()


@pytest.mark.parametrize("event", GUARD_EVENTS)
def test_without_the_service_a_guard_event_is_blocked(cs: Session, event: str) -> None:
    """A hook that cannot answer is, for Cursor, a failure that lets the action through
    ("Other exit codes - Hook failed, action proceeds (fail-open by default)"). initd
    must not answer so when it cannot ask its guards: "When initd cannot ask its hooks
    about a guard-capable event (no service at the socket), the answer is the agent's own
    'blocked'/'deny' answer, never an allow" (issue 37's interface contract): exit 2 ("Block
    the action (equivalent to returning permission: "deny")"), a deny, or, for
    beforeSubmitPrompt, ``continue: false``."""
    cs.start()
    missing = str(Path(cs.sock).with_name("nobody-here.sock"))
    answer = read_answer(event, emit_from(cs, payload(event, cs), socket=missing))
    assert answer.blocked, answer.describe()
    assert not answer.problems, answer.describe()


@pytest.mark.parametrize("event", contract_events())
def test_the_payloads_here_are_cursors_shape(event: str) -> None:
    """The suite's own payloads against py-cursor-hooks 0.1.1's input models
    (contracts/cursor/README.md), so that what is sent here is what Cursor sends."""
    assert input_errors(event, payload(event)) == []
