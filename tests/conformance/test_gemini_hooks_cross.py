"""One set of guards for every agent, Gemini CLI's row: guards written once as Claude Code
project hooks give Gemini CLI its own "blocked" answer for Gemini's real payloads; and a
Gemini hook sees Gemini's input when another agent (Claude Code) sent the event.

References: https://geminicli.com/docs/hooks/reference and
https://geminicli.com/docs/reference/tools (as shipped in @google/gemini-cli@0.61.0 =
gemini-cli git 5411f113, 2026-08-21); Gemini's own Claude-to-Gemini mapping, `gemini hooks
migrate --from-claude` (packages/cli/src/commands/hooks/migrate.ts at 5411f113: PreToolUse
-> BeforeTool, UserPromptSubmit -> BeforeAgent; Bash -> run_shell_command, Write ->
write_file, Edit -> replace, Read -> read_file); Claude Code's
https://code.claude.com/docs/en/hooks (2026-08 revision) for the Claude side."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import command
from tests.conformance.gemini_hooks_answer import claude_blocked
from tests.conformance.gemini_hooks_support import (
    GeminiSession,
    emit_from,
    exits,
    group,
    hook,
    payload,
    settings,
    tool,
)

pytestmark = pytest.mark.timeout(120)

ENV_CHECK = ("python3 -c 'import json,sys; p=json.load(sys.stdin)[\"tool_input\"]"
             ".get(\"file_path\",\"\"); sys.exit(0 if not p.endswith(\".env\") else "
             "(print(\"no writes to .env\", file=sys.stderr) or 2))'")


@pytest.fixture
def gs(tmp_path: Path) -> Iterator[GeminiSession]:
    session = GeminiSession(tmp_path)
    try:
        yield session
    finally:
        session.stop()


def claude_guards(gs: GeminiSession) -> None:
    """The issue's three guards as a Claude Code project hook (.claude/settings.json)."""
    gs.project({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [command("echo 'rm is not allowed' >&2; exit 2",
                                              **{"if": "Bash(rm *)"})]},
        {"matcher": "Bash", "hooks": [command("echo 'no pushes' >&2; exit 2",
                                              **{"if": "Bash(git push *)"})]},
        {"matcher": "Write|Edit", "hooks": [command(ENV_CHECK)]},
    ]}})
    gs.start()


@pytest.mark.parametrize("name, args, why", [
    ("run_shell_command", {"command": "rm -rf /tmp/x"}, "rm is not allowed"),
    ("run_shell_command", {"command": "git push --force origin main"}, "no pushes"),
    ("write_file", {"file_path": ".env", "content": "TOKEN=1\n"}, "no writes to .env"),
    ("replace", {"file_path": ".env", "old_string": "TOKEN=1", "new_string": "TOKEN=2",
                 "instruction": "rotate"}, "no writes to .env"),
])
def test_claude_code_guards_block_geminis_tool_calls(gs: GeminiSession, name: str,
                                                     args: dict[str, Any], why: str) -> None:
    """The guard matrix, Gemini's row: REFERENCE BeforeTool "decision: Set to "deny" (or
    "block") to prevent the tool from executing" / "Exit Code 2 (Block Tool)": Gemini's own
    blocked answer, with the guard's reason, for Gemini's run_shell_command, write_file and
    replace (TOOLS: run_shell_command {command}, write_file {file_path, content}, replace
    {file_path, old_string, new_string, instruction})."""
    claude_guards(gs)
    answer = gs.ask(tool(gs, name, **args))
    assert answer.valid, answer
    assert answer.blocked or answer.stop, answer
    assert why in answer.reason + answer.stop_reason, answer


@pytest.mark.parametrize("name, args", [
    ("run_shell_command", {"command": "ls"}),
    ("write_file", {"file_path": "notes.md", "content": "x"}),
    ("read_file", {"file_path": ".env"}),
])
def test_claude_code_guards_allow_the_rest(gs: GeminiSession, name: str,
                                           args: dict[str, Any]) -> None:
    """The guard matrix: "and allow ls"; a write elsewhere and a read are not the guards'
    business (REFERENCE: "0: Success")."""
    claude_guards(gs)
    answer = gs.ask(tool(gs, name, **args))
    assert answer.code == 0 and answer.valid, answer
    assert not answer.blocked and not answer.stop, answer


def claude_event(gs: GeminiSession, event: str, **fields: Any) -> dict[str, Any]:
    return {"session_id": "abc123", "transcript_path": str(gs.home / "t.jsonl"),
            "cwd": str(gs.ws), "permission_mode": "default", "hook_event_name": event,
            **fields}


def test_a_gemini_hook_sees_geminis_before_tool_when_claude_runs_bash(
        gs: GeminiSession) -> None:
    """The interface contract: "a Gemini hook sees Gemini's BeforeTool input even when
    Claude sent a PreToolUse for Bash", read by Gemini's rules (exit 2 blocks) and answered
    in Claude's (code.claude.com/docs/en/hooks: PreToolUse exit 2 "Blocks the tool call");
    migrate.ts: Bash -> run_shell_command, PreToolUse -> BeforeTool."""
    gs.gemini_project(settings(BeforeTool=group(
        hook(gs.record("gemini") + "; " + exits(2, "gemini guard says no")),
        matcher="run_shell_command")))
    gs.start()
    done = emit_from("claude", claude_event(
        gs, "PreToolUse", tool_name="Bash", tool_use_id="toolu_01",
        tool_input={"command": "rm -rf /tmp/x", "description": "clean"}),
        event=None, socket=gs.sock, home=gs.home, cwd=gs.ws)
    blocked, why = claude_blocked(done)
    assert blocked and "gemini guard says no" in why, done
    seen = gs.seen("gemini")
    assert seen["hook_event_name"] == "BeforeTool", seen
    assert seen["tool_name"] == "run_shell_command", seen
    assert seen["tool_input"]["command"] == "rm -rf /tmp/x", seen
    assert seen["cwd"] == str(gs.ws), seen
    for key in ("session_id", "transcript_path", "timestamp"):
        assert isinstance(seen.get(key), str), (key, seen)


def test_a_gemini_hook_sees_write_file_when_claude_writes(gs: GeminiSession) -> None:
    """migrate.ts: Write -> write_file; TOOLS write_file {file_path, content}."""
    gs.gemini_project(settings(BeforeTool=group(hook(gs.record("w") + "; echo '{}'"),
                                                matcher="write_file|replace")))
    gs.start()
    emit_from("claude", claude_event(gs, "PreToolUse", tool_name="Write",
                                     tool_use_id="toolu_02",
                                     tool_input={"file_path": str(gs.ws / "a.txt"),
                                                 "content": "hi"}),
              event=None, socket=gs.sock, home=gs.home, cwd=gs.ws)
    seen = gs.seen("w")
    assert seen["tool_name"] == "write_file", seen
    assert seen["tool_input"]["file_path"] == str(gs.ws / "a.txt"), seen
    assert seen["tool_input"]["content"] == "hi", seen


def test_a_gemini_hook_sees_before_agent_when_claude_submits_a_prompt(
        gs: GeminiSession) -> None:
    """migrate.ts: UserPromptSubmit -> BeforeAgent; REFERENCE BeforeAgent "prompt: (string)
    The original text submitted by the user"."""
    gs.gemini_project(settings(BeforeAgent=group(hook(gs.record("p") + "; echo '{}'"))))
    gs.start()
    emit_from("claude", claude_event(gs, "UserPromptSubmit", prompt="write the tests"),
              event=None, socket=gs.sock, home=gs.home, cwd=gs.ws)
    seen = gs.seen("p")
    assert seen["hook_event_name"] == "BeforeAgent" and seen["prompt"] == "write the tests"


def test_gemini_guards_hold_for_geminis_own_calls_beside_claudes(gs: GeminiSession) -> None:
    """Both agents' files are read for Gemini's event: a Gemini user guard and a Claude
    project guard both run, and either one's block is Gemini's block (the issue: "initd
    reads that agent's own hook files ... whichever agent sent the event")."""
    gs.gemini_user(settings(BeforeTool=group(hook(gs.record("mine") + "; echo '{}'"))))
    claude_guards(gs)
    answer = gs.ask(payload(gs, "BeforeTool", tool_name="run_shell_command",
                            tool_input={"command": "rm -rf build"}))
    assert answer.valid and answer.blocked, answer
    assert gs.runs("mine") == 1
