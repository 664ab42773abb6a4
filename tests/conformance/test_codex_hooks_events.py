"""OpenAI Codex hooks: every event of Codex 0.171.0 goes through ``initd emit --from codex``
to the hooks of Codex's own files, which get Codex's own payload; the event is the
payload's ``hook_event_name`` unless named on the command line; with no service, a guard
event is refused. Each case quotes its reference (codex_hooks_support: HOOKS, SRC, CODEX).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_hooks_support import Session, session_fixture
from tests.conformance.codex_hooks_answers import read_answer
from tests.conformance.codex_hooks_support import (
    EVENTS,
    GUARDS,
    bash,
    emit,
    group,
    handler,
    hooks_file,
    payload,
    schema,
    validate,
    write_json,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cx(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


@pytest.mark.parametrize("event", EVENTS)
def test_the_payloads_here_are_codex_payloads(event: str, tmp_path: Path) -> None:
    """CODEX: the input schema of each event, as @openai/codex@0.171.0 carries it
    (contracts/codex/hooks-0.171.0/<event>.command.input.schema.json,
    ``"additionalProperties": false``). The suite's own fixtures are checked first."""
    validate(payload(event, tmp_path), schema(event, "input"))


@pytest.mark.parametrize("event", EVENTS)
def test_each_event_reaches_the_codex_hook_with_codex_payload(cx: Session, event: str) -> None:
    """HOOKS, "Common input fields": "`session_id` | `string` | Current session or thread
    id", "`transcript_path` | `string | null`", "`cwd`", "`hook_event_name` | Current hook
    event name", "`model` | Active model slug"; SRC, events/*.rs: each event serializes
    its own ``*CommandInput`` to the hook's stdin. A hook in a Codex file gets what Codex
    would give it: the payload, unchanged (the schemas allow no other field)."""
    write_json(cx, "project", hooks_file(**{event: group(handler(cx.record("h")))}))
    cx.start()
    sent = payload(event, cx.ws)
    proc = emit(cx, sent)
    assert proc.returncode == 0, proc.stderr
    assert read_answer(event, proc).failed is None
    assert cx.seen("h") == sent
    validate(cx.seen("h"), schema(event, "input"))


def test_unknown_payload_fields_reach_the_hook_untouched(cx: Session) -> None:
    """Issue 37's contract: "Unknown fields pass through to the hooks untouched" (a newer
    Codex adds fields: 0.171.0's ``agent_id``/``agent_type`` came that way, SRC
    ``SubagentCommandInputFields``)."""
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(cx.record("h")))))
    cx.start()
    sent = {**bash(cx.ws, "ls"), "future_field": {"nested": [1, "two", None]},
            "agent_id": "agent-7", "agent_type": "explorer"}
    emit(cx, sent)
    assert cx.seen("h") == sent


def test_the_event_named_on_the_command_line_wins(cx: Session) -> None:
    """The interface contract (brief, 1): "The event is the payload's own event-name field
    (as the agent names it); EVENT, when given, wins." A PostToolUse hook runs, the
    PreToolUse one does not."""
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(cx.record("pre"))),
                                         PostToolUse=group(handler(cx.record("post")))))
    cx.start()
    emit(cx, payload("PostToolUse", cx.ws, hook_event_name="PreToolUse"), event="PostToolUse")
    assert cx.runs("post") == 1 and cx.runs("pre") == 0


def test_the_socket_may_be_given_with_socket(cx: Session) -> None:
    """The interface contract (brief, 1): "The socket is --socket or $INITD_SOCKET"."""
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(cx.record("h")))))
    cx.start()
    proc = emit(cx, bash(cx.ws, "ls"), socket=cx.sock)
    assert proc.returncode == 0, proc.stderr
    assert cx.runs("h") == 1


@pytest.mark.parametrize("event", GUARDS)
def test_without_a_service_a_guard_event_is_refused(tmp_path: Path, event: str) -> None:
    """The interface contract (brief, 1): "When initd cannot ask its hooks about a
    guard-capable event (no service at the socket), the answer is the agent's own
    'blocked'/'deny' answer, never an allow." SRC: PreToolUse denies by exit 2 with the
    reason on stderr or ``permissionDecision: "deny"``; PermissionRequest by exit 2 or
    ``decision.behavior: "deny"``; UserPromptSubmit by exit 2 or ``decision: "block"``."""
    s = Session(tmp_path)  # never started: nothing at the socket
    sent = bash(s.ws, "ls") if event == "PreToolUse" else payload(event, s.ws)
    answer = read_answer(event, emit(s, sent))
    assert answer.failed is None, answer
    assert answer.blocked and answer.reason, answer


@pytest.mark.parametrize("event", ["PostToolUse", "SessionStart", "Stop", "PostCompact"])
def test_without_a_service_other_events_are_answered_validly(tmp_path: Path,
                                                              event: str) -> None:
    """SRC, events/*.rs: for these events any exit but 0 (or 2 with a reason) is the hook's
    failure; Stop's exit 2 or ``decision: "block"`` would keep the agent working. Without
    a service initd still answers in Codex's terms: nothing Codex reads as an error, and
    no Stop block (which would loop the agent on initd's absence)."""
    s = Session(tmp_path)
    proc = emit(s, payload(event, s.ws))
    answer = read_answer(event, proc)
    assert answer.failed is None, (answer, proc.stderr)
    assert not answer.blocked


def test_a_payload_that_is_not_json_is_refused_for_a_guard(cx: Session) -> None:
    """SRC: ``PreToolUse`` "exit code 2" with stderr is the block. initd cannot read the
    event, so it cannot ask its hooks: the refusal (invariant 12, "a guard never passes
    because initd could not load, parse or run it")."""
    cx.start()
    answer = read_answer("PreToolUse", emit(cx, "{not json", event="PreToolUse"))
    assert answer.blocked, answer


def test_the_hook_runs_in_the_session_cwd(cx: Session) -> None:
    """STORE, commandHandler: "Command hook handler. Commands run with the session cwd as
    their working directory." SRC command_runner.rs: ``command.current_dir(cwd)``."""
    sub = cx.ws / "sub"
    sub.mkdir()
    out = cx.out / "pwd"
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(
        f"cat >/dev/null; pwd > {json.dumps(str(out))}"))))
    cx.start()
    emit(cx, bash(sub, "ls"))
    assert out.read_text().strip() == str(sub)
