"""Claude Code's 31 hook events through ``initd emit --from claude``: each event's payload,
as the reference's example shows it, reaches the hooks of that event with its fields, and
the answer is one Claude Code can read. Every case cites REF
(https://code.claude.com/docs/en/hooks, the revision of 2026-08-22, Claude Code v2.1.240)
unless it says otherwise.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_current_support import (
    ALL_EVENTS,
    SCHEMA,
    emit_from,
    own_fields,
    payload,
    read_answer,
    schema_errors,
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


@pytest.fixture
def cc(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def recording(cc: Session, event: str, name: str = "hook", then: str = "") -> None:
    """A project hook on ``event`` that records its stdin (and then runs ``then``)."""
    cc.project(hooks(**{event: group(command(cc.record(name) + then))}))


def test_the_reference_lists_31_events() -> None:
    """REF, "Hook lifecycle": "The table below summarizes when each event fires" — 31 rows,
    SessionStart to SessionEnd (the issue's "30" misses one: DirectoryAdded and
    MessageDisplay are both rows). @anthropic-ai/claude-agent-sdk@0.3.240's HOOK_EVENTS is
    the same 31 names; its JSON schema (contracts/claude) has an input type for each."""
    assert len(ALL_EVENTS) == len(set(ALL_EVENTS)) == 31
    inputs = json.loads(SCHEMA.read_text())["definitions"]
    names = {ref["$ref"].split("/")[-1].removesuffix("HookInput")
             for ref in inputs["HookInput"]["anyOf"]}
    assert names == set(ALL_EVENTS)


@pytest.mark.parametrize("event", ALL_EVENTS)
def test_the_fixture_is_valid_by_the_sdk_types(event: str) -> None:
    """The payloads of these tests are the reference's own examples ("<Event> input"
    sections) and each is valid as the SDK's `<Event>HookInput` (sdk.d.ts of
    @anthropic-ai/claude-agent-sdk@0.3.240, as JSON schema)."""
    assert schema_errors(payload(event), f"{event}HookInput") == []


@pytest.mark.parametrize("event", ALL_EVENTS)
def test_each_event_reaches_its_hooks_with_its_fields(cc: Session, event: str) -> None:
    """REF, "Hook lifecycle": "When an event fires and a matcher matches, Claude Code passes
    JSON context about the event to your hook handler. For command hooks, input arrives on
    stdin." "Common input fields": "Hook events receive these fields as JSON, in addition
    to event-specific fields documented in each hook event section."

    Claude Code's payload goes to `initd emit --from claude` on stdin; a project hook of the
    same event gets that event's name and every one of its own fields, unchanged."""
    recording(cc, event, then="; echo /tmp" if event == "WorktreeCreate" else "")
    cc.start()
    proc = emit_from(cc, payload(event, cc))
    seen = cc.seen("hook")
    assert seen.get("hook_event_name") == event, read_answer(event, proc).describe()
    for key, value in own_fields(event).items():
        assert seen.get(key) == value, f"{event}.{key}: {seen.get(key)!r} != {value!r}"
    for key in ("session_id", "transcript_path", "cwd"):
        assert isinstance(seen.get(key), str) and seen[key], f"{event}: no {key}: {seen}"
    assert cc.runs("hook") == 1


@pytest.mark.parametrize("event", ALL_EVENTS)
def test_unknown_fields_reach_the_hook_untouched(cc: Session, event: str) -> None:
    """The interface's rule ("Unknown fields pass through to the hooks untouched", issue 37),
    and the reference's own history: fields are added release by release (`prompt_id`
    "Requires Claude Code v2.1.196 or later", `effort`, `duration_ms`, ...), so a field
    newer than initd reaches a hook as Claude Code wrote it."""
    recording(cc, event, then="; echo /tmp" if event == "WorktreeCreate" else "")
    cc.start()
    extra = {"x_future_field": {"nested": [1, "two", None]}, "effort": {"level": "xhigh"},
             "prompt_id": "550e8400-e29b-41d4-a716-446655440000"}
    emit_from(cc, payload(event, cc, **extra))
    seen = cc.seen("hook")
    for key, value in extra.items():
        assert seen.get(key) == value, f"{event}: {key} is {seen.get(key)!r}"


@pytest.mark.parametrize("event", ALL_EVENTS)
def test_a_silent_hook_decides_nothing_and_the_answer_is_valid(cc: Session,
                                                               event: str) -> None:
    """REF, "How a hook resolves": "Exit code 0 with no output means the hook has no
    decision to report"; "JSON output": "Your hook's stdout must contain only the JSON
    object"; "Exit code 0": stdout that starts with `{` is parsed as JSON, and plain text
    becomes context on UserPromptSubmit, UserPromptExpansion and SessionStart.

    initd's answer, read as Claude Code reads a hook's: no block, no stop, no context, no
    error notice, and any JSON is valid by the SDK's `SyncHookJSONOutput`. (WorktreeCreate's
    hook prints the worktree's path, which is that event's answer: "print the path as the
    last non-empty line of stdout".)"""
    worktree = cc.root / "wt-feature-auth"
    worktree.mkdir()
    then = f"; echo {q(worktree)}" if event == "WorktreeCreate" else ""
    cc.project(hooks(**{event: group(command("cat >/dev/null" + then))}))
    cc.start()
    answer = read_answer(event, emit_from(cc, payload(event, cc)))
    detail = answer.describe()
    assert answer.problems == [], detail
    assert not answer.blocked and not answer.stop and not answer.error, detail
    assert answer.context == [], detail
    if event == "WorktreeCreate":
        assert answer.worktree_path == str(worktree), detail
    if event == "PreToolUse":
        assert answer.permission is None, detail  # "staying silent doesn't approve it"
    if event == "PermissionRequest":
        assert answer.request is None, detail


@pytest.mark.parametrize("event", ["PreToolUse", "Stop", "SessionStart", "ConfigChange"])
def test_the_event_named_on_the_command_line_wins(cc: Session, event: str) -> None:
    """The interface (issue 37): "The event is the payload's own event-name field (as the
    agent names it); EVENT, when given, wins." A payload without `hook_event_name` and
    `initd emit --from claude EVENT` reach EVENT's hooks, as EVENT."""
    recording(cc, event)
    cc.start()
    data = payload(event, cc)
    del data["hook_event_name"]
    emit_from(cc, data, event)
    assert cc.seen("hook")["hook_event_name"] == event


def test_the_socket_may_be_given_with_the_flag(cc: Session) -> None:
    """The interface: "The socket is --socket or $INITD_SOCKET"."""
    recording(cc, "UserPromptSubmit")
    cc.start()
    emit_from(cc, payload("UserPromptSubmit", cc), use_flag=True)
    assert cc.seen("hook")["prompt"] == own_fields("UserPromptSubmit")["prompt"]


@pytest.mark.parametrize("event, other", [("Setup", "SessionStart"),
                                          ("PostToolBatch", "PostToolUse"),
                                          ("ElicitationResult", "Elicitation"),
                                          ("StopFailure", "Stop")])
def test_a_new_event_runs_its_own_hooks_not_a_neighbours(cc: Session, event: str,
                                                         other: str) -> None:
    """REF: each is its own event with its own hooks ("Setup ... For per-session
    initialization, use SessionStart instead"; PostToolBatch "fires exactly once with the
    full batch" where PostToolUse "fires once per tool"; StopFailure "Runs instead of
    Stop"). An event is never run as the nearest event initd knew before."""
    cc.project(hooks(**{event: group(command(cc.record("own"))),
                        other: group(command(cc.record("other")))}))
    cc.start()
    emit_from(cc, payload(event, cc))
    assert cc.runs("own") == 1 and cc.runs("other") == 0


def test_the_vendored_schema_is_the_one_the_readme_names() -> None:
    """contracts/claude/README.md names the schema's source (package, version, file, hashes)
    and the schema's own sha256; `sh regenerate.sh` rebuilds it from the registry. The file
    the tests read is that file."""
    readme = (SCHEMA.parent / "README.md").read_text()
    assert hashlib.sha256(SCHEMA.read_bytes()).hexdigest() in readme
