"""Matchers of the events the current Claude Code reference added (each filters on its own
input field), the events without matcher support, and their timeouts, through
``initd emit --from claude``. Every case cites REF (https://code.claude.com/docs/en/hooks,
the revision of 2026-08-22, Claude Code v2.1.240), "Matcher patterns".
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_current_support import emit_from, payload, read_answer
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


# (event, the payload's fields, a matcher that selects it, one that does not), from the
# table "Each event type matches on a different field".
CASES: list[tuple[str, dict[str, Any], str, str]] = [
    ("Setup", {"trigger": "maintenance"}, "maintenance", "init"),
    ("SessionStart", {"source": "fork"}, "resume|fork", "startup"),
    ("SessionEnd", {"reason": "prompt_input_exit"}, "prompt_input_exit", "other"),
    ("Notification", {"notification_type": "elicitation_dialog"}, "elicitation_dialog",
     "permission_prompt"),
    ("SubagentStart", {"agent_type": "my-plugin:reviewer"}, "^my-plugin:reviewer$",
     "reviewer"),
    ("SubagentStop", {"agent_type": "code-reviewer"}, "code-reviewer", "senior-code-reviewer"),
    ("PostCompact", {"trigger": "auto"}, "auto", "manual"),
    ("ConfigChange", {"source": "skills"}, "skills, user_settings", "project_settings"),
    ("DirectoryAdded", {"source": "register_repo_root"}, "register_repo_root",
     "slash_command"),
    ("StopFailure", {"error": "overloaded"}, "rate_limit|overloaded", "rate_limit"),
    ("InstructionsLoaded", {"load_reason": "nested_traversal"},
     "path_glob_match|nested_traversal", "session_start"),
    ("UserPromptExpansion", {"command_name": "deploy"}, "deploy", "deploy-prod"),
    ("Elicitation", {"mcp_server_name": "my-mcp-server"}, "my-mcp-server", "my-mcp"),
    ("ElicitationResult", {"mcp_server_name": "github"}, "^git", "gitlab"),
    ("PermissionRequest", {"tool_name": "mcp__memory__create_entities"}, "mcp__memory__.*",
     "mcp__memory"),
    ("PermissionDenied", {"tool_name": "Edit"}, "Edit, Write", "NotebookEdit"),
    ("PostToolUseFailure", {"tool_name": "NotebookEdit"}, "Edit.*", "^Edit$"),
]


@pytest.mark.parametrize("event, fields, selects, skips", CASES,
                         ids=[case[0] for case in CASES])
def test_each_event_matches_on_its_own_field(cc: Session, event: str, fields: dict[str, Any],
                                             selects: str, skips: str) -> None:
    """REF, "Matcher patterns": ""*", "", or omitted: Match all"; "Only letters, digits, _,
    -, spaces, ,, and |: Exact string, or list of exact strings separated by | or , with
    optional surrounding whitespace"; "Contains any other character: JavaScript regular
    expression, unanchored". The field per event: Setup "which CLI flag triggered setup",
    SessionStart "how the session started", SessionEnd "why the session ended",
    Notification "notification type", SubagentStart/Stop "agent type", PostCompact "what
    triggered compaction", ConfigChange "configuration source", DirectoryAdded "how the
    directory was added", StopFailure "error type", InstructionsLoaded "load reason",
    UserPromptExpansion "command name", Elicitation(Result) "MCP server name", the tool
    events "tool name"."""
    cc.project(hooks(**{event: [group(command(cc.record("selected")), matcher=selects),
                                group(command(cc.record("skipped")), matcher=skips)]}))
    cc.start()
    emit_from(cc, payload(event, cc, **fields))
    assert (cc.runs("selected"), cc.runs("skipped")) == (1, 0)


def test_stop_failure_matchers_keep_a_hyphen_on_the_regex_path(cc: Session) -> None:
    """REF: "FileChanged and StopFailure use a narrower exact-match set of letters, digits,
    _, and | only. A hyphen, space, or comma in a matcher for those two events keeps it on
    the regular-expression path, and only | separates alternatives." So "rate_limit,
    overloaded" is a regex that matches neither error, and "_limit" (letters and _ only)
    is the exact string "_limit", which does not match "rate_limit"."""
    cc.project(hooks(StopFailure=[group(command(cc.record("comma")),
                                        matcher="rate_limit, overloaded"),
                                  group(command(cc.record("part")), matcher="_limit"),
                                  group(command(cc.record("regex")), matcher="rate_lim.t")]))
    cc.start()
    emit_from(cc, payload("StopFailure", cc))
    assert (cc.runs("comma"), cc.runs("part"), cc.runs("regex")) == (0, 0, 1)


@pytest.mark.parametrize("event", ["PostToolBatch", "TaskCreated", "WorktreeRemove",
                                   "MessageDisplay", "CwdChanged", "TeammateIdle"])
def test_a_matcher_on_an_event_without_matcher_support_is_ignored(cc: Session,
                                                                  event: str) -> None:
    """REF: "UserPromptSubmit, PostToolBatch, Stop, TeammateIdle, TaskCreated,
    TaskCompleted, WorktreeCreate, WorktreeRemove, MessageDisplay: no matcher support";
    CwdChanged "no matcher support"; "If you add a matcher field to an event without
    matcher support, it is silently ignored." The hook runs."""
    cc.project(hooks(**{event: group(command(cc.record("hook")), matcher="NoSuchThing")}))
    cc.start()
    emit_from(cc, payload(event, cc))
    assert cc.runs("hook") == 1


def test_file_changed_matches_the_changed_files_basename(cc: Session) -> None:
    """REF, "FileChanged": the matcher "filters which hook groups run using the standard
    matcher rules against the changed file's basename" (".envrc|.env": letters, "." is not
    in the exact set, so a regex, unanchored)."""
    cc.project(hooks(FileChanged=[group(command(cc.record("env")), matcher="^\\.envrc$"),
                                  group(command(cc.record("csv")), matcher="data.csv")]))
    cc.start()
    emit_from(cc, payload("FileChanged", cc, file_path=str(cc.ws / ".envrc")))
    assert (cc.runs("env"), cc.runs("csv")) == (1, 0)


@pytest.mark.slow
def test_message_display_hooks_time_out_after_10_seconds(cc: Session) -> None:
    """REF, "MessageDisplay": "If the hook fails or times out, Claude Code displays the
    original text. The default timeout for this event is 10 seconds". A hook that would
    answer after 40 s: initd's answer carries no replacement text."""
    never = cc.out / "never"
    cc.project(hooks(MessageDisplay=group(command(
        f"cat >/dev/null; i=0; while [ ! -e {q(never)} ] && [ $i -lt 400 ]; do sleep 0.1; "
        "i=$((i+1)); done; echo '{\"hookSpecificOutput\": {\"hookEventName\": "
        "\"MessageDisplay\", \"displayContent\": \"late\"}}'"))))
    cc.start()
    answer = read_answer("MessageDisplay", emit_from(cc, payload("MessageDisplay", cc)))
    assert "displayContent" not in answer.specific, answer.describe()
