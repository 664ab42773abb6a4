"""What a hook of ``.gemini/settings.json`` gets when Gemini CLI sends initd an event: its
stdin in Gemini's shape for every event (the base fields and the event's own), unknown
fields untouched, the environment and the command's variables.

Reference: https://geminicli.com/docs/hooks/reference and https://geminicli.com/docs/hooks/
(as shipped in @google/gemini-cli@0.61.0 = gemini-cli git 5411f113, 2026-08-21); the
engine of @google/gemini-cli-core@0.61.0 (dist/src/hooks/hookRunner.js) where the
documentation is silent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_hooks_support import q
from tests.conformance.gemini_hooks_support import (
    EVENTS,
    FIELDS,
    GeminiSession,
    group,
    hook,
    payload,
    settings,
    tool,
)

pytestmark = pytest.mark.timeout(120)

BASE = ("session_id", "transcript_path", "cwd", "hook_event_name", "timestamp")


@pytest.fixture
def gs(tmp_path: Path) -> Iterator[GeminiSession]:
    session = GeminiSession(tmp_path)
    try:
        yield session
    finally:
        session.stop()


def every_event(gs: GeminiSession) -> None:
    gs.gemini_project(settings(**{event: group(hook(gs.record(event) + "; echo '{}'"))
                                  for event in EVENTS}))
    gs.start()


@pytest.mark.parametrize("event", EVENTS)
def test_each_event_reaches_its_hook_in_geminis_shape(gs: GeminiSession, event: str) -> None:
    """REFERENCE "Base input schema": "All hooks receive these common fields via stdin:
    session_id, transcript_path, cwd, hook_event_name, timestamp"; and each event's
    "Input Fields" (BeforeTool tool_name, tool_input; AfterTool tool_response; BeforeAgent
    prompt; AfterAgent prompt, prompt_response, stop_hook_active; BeforeModel,
    BeforeToolSelection llm_request; AfterModel llm_response; SessionStart source;
    SessionEnd reason; Notification notification_type, message, details; PreCompress
    trigger)."""
    every_event(gs)
    sent = payload(gs, event)
    done = gs.gemini(sent)
    assert done.returncode in (0, 2), done
    seen = gs.seen(event)
    assert seen["hook_event_name"] == event
    for key in BASE:
        assert isinstance(seen.get(key), str), (key, seen)
    assert seen["session_id"] == sent["session_id"], seen
    assert seen["cwd"] == sent["cwd"], seen
    for key, value in FIELDS[event].items():
        assert seen.get(key) == value, (key, seen)
    assert gs.runs(event) == 1


def test_the_event_argument_wins_over_the_payloads_name(gs: GeminiSession) -> None:
    """The interface contract: "The event is the payload's own event-name field ...
    EVENT, when given, wins." (hook_event_name is the event's name, REFERENCE)."""
    every_event(gs)
    gs.gemini(payload(gs, "AfterTool"), event="BeforeTool")
    assert gs.runs("BeforeTool") == 1 and gs.runs("AfterTool") == 0


def test_unknown_fields_reach_the_hook_untouched(gs: GeminiSession) -> None:
    """The interface contract: "Unknown payload fields reach hooks untouched" (a newer
    Gemini CLI adds fields: types.d.ts BeforeToolInput has mcp_context and
    original_request_name, a tail call's original name)."""
    every_event(gs)
    extra = {"mcp_context": {"server_name": "github", "tool_name": "create_issue",
                             "command": "npx", "args": ["-y", "gh-mcp"]},
             "original_request_name": "read_file", "x_future": {"nested": [1, "two"]}}
    gs.gemini({**tool(gs, "mcp_github_create_issue", title="t"), **extra})
    seen = gs.seen("BeforeTool")
    for key, value in extra.items():
        assert seen.get(key) == value, (key, seen)
    assert seen["tool_name"] == "mcp_github_create_issue"


@pytest.mark.parametrize("name, args", [
    ("run_shell_command", {"command": "git status", "description": "status",
                           "dir_path": "src", "is_background": False}),
    ("write_file", {"file_path": "notes.md", "content": "# notes\n"}),
    ("replace", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2",
                 "instruction": "bump", "allow_multiple": False}),
    ("read_file", {"file_path": "a.py", "start_line": 1, "end_line": 20}),
    ("read_many_files", {"include": ["src/**/*.py"], "recursive": True}),
    ("glob", {"pattern": "**/*.md"}),
    ("grep_search", {"pattern": "TODO", "dir_path": "."}),
    ("web_fetch", {"prompt": "summarise https://example.com"}),
])
def test_each_tools_arguments_reach_the_hook_as_they_are(gs: GeminiSession, name: str,
                                                         args: dict[str, object]) -> None:
    """TOOLS "Tool argument keys": run_shell_command (command, description, dir_path,
    is_background), write_file (file_path, content), replace (file_path, old_string,
    new_string, instruction, allow_multiple), read_file (file_path, start_line, end_line),
    read_many_files, glob, grep_search, web_fetch; REFERENCE BeforeTool "tool_input: The
    raw arguments generated by the model"."""
    every_event(gs)
    gs.gemini(payload(gs, "BeforeTool", tool_name=name, tool_input=args))
    seen = gs.seen("BeforeTool")
    assert seen["tool_name"] == name and seen["tool_input"] == args, seen


def test_hooks_get_geminis_environment_variables(gs: GeminiSession) -> None:
    """HOOKS "Environment variables": "GEMINI_PROJECT_DIR: The absolute path to the project
    root. GEMINI_SESSION_ID: The unique ID for the current session. GEMINI_CWD: The current
    working directory. CLAUDE_PROJECT_DIR: (Alias) Provided for compatibility." """
    out = gs.out / "env.txt"
    body = (f"cat >/dev/null; printf '%s\\n' \"$GEMINI_PROJECT_DIR\" \"$GEMINI_SESSION_ID\" "
            f"\"$GEMINI_CWD\" \"$CLAUDE_PROJECT_DIR\" > {q(out)}; echo '{{}}'")
    gs.gemini_project(settings(BeforeTool=group(hook(body))))
    gs.start()
    sent = tool(gs, "read_file", file_path="a.py")
    gs.gemini(sent)
    lines = out.read_text().splitlines()
    assert lines == [str(gs.ws), sent["session_id"], str(gs.ws), str(gs.ws)], lines


def test_the_commands_variables_name_the_project(gs: GeminiSession) -> None:
    """HOOKS "Configuration schema": "command": "$GEMINI_PROJECT_DIR/.gemini/hooks/
    security.sh" runs the project's script (CORE hookRunner.expandCommand replaces
    $GEMINI_PROJECT_DIR, $CLAUDE_PROJECT_DIR with the quoted project path)."""
    script = gs.ws / ".gemini" / "hooks" / "security.sh"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/bash\n" + gs.record("script") + "\necho '{}'\n")
    script.chmod(0o755)
    gs.gemini_project(settings(BeforeTool=group(
        hook("$GEMINI_PROJECT_DIR/.gemini/hooks/security.sh", name="security-check",
             timeout=5000), matcher="write_file|replace")))
    gs.start()
    gs.gemini(tool(gs, "write_file", file_path="a.txt", content="x"))
    assert gs.seen("script")["tool_input"]["file_path"] == "a.txt"


def test_a_hook_runs_in_the_sessions_directory(gs: GeminiSession) -> None:
    """WRITING "Quick start": a hook's relative paths name the project
    (echo ... >> .gemini/tool-log.txt); CORE hookRunner spawns it with cwd = input.cwd."""
    gs.gemini_project(settings(BeforeTool=group(hook(
        "cat >/dev/null; pwd > .gemini/where.txt; echo '{}'"))))
    gs.start()
    gs.gemini(tool(gs, "read_file", file_path="a.py"))
    assert (gs.ws / ".gemini" / "where.txt").read_text().strip() == str(gs.ws)


def test_a_hooks_own_env_reaches_it(gs: GeminiSession) -> None:
    """CORE types.d.ts CommandHookConfig "env?: Record<string, string>" (hookRunner spawns
    the hook with `...hookConfig.env` over its environment)."""
    out = gs.out / "env.txt"
    gs.gemini_project(settings(BeforeTool=group(hook(
        f"cat >/dev/null; echo \"$POLICY_LEVEL\" > {q(out)}; echo '{{}}'",
        env={"POLICY_LEVEL": "strict"}))))
    gs.start()
    gs.gemini(tool(gs, "read_file", file_path="a.py"))
    assert out.read_text().strip() == "strict"
