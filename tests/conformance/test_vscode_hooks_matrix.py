"""The cross-agent guard matrix, VS Code's row, and the other direction: three guards
written once as a Claude Code project hook (.claude/settings.json) hold for the Local
harness's real payloads (run_in_terminal, create_file, replace_string_in_file), and a VS
Code hook file's guard gets VS Code's own shape when Claude Code sends the event. VS
Code's "blocked" is read by vscode_hooks_answers.read_answer (exit 2, or
``permissionDecision: deny``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import Session, command, group, hooks
from tests.conformance.vscode_hooks_answers import assert_valid, blocked, read_answer
from tests.conformance.vscode_hooks_support import (
    CREATE,
    SHELL,
    VSCode,
    cmd,
    create,
    edit,
    exits,
    schema,
    shell,
    validate,
    vhooks,
)

pytestmark = pytest.mark.timeout(120)

ENV_GUARD = ("f=$(python3 -c 'import json,sys; print(json.load(sys.stdin)"
             "[\"tool_input\"].get(\"file_path\", \"\"))'); "
             "case \"$f\" in *.env) echo \"no writes to $f\" >&2; exit 2;; esac; exit 0")


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[VSCode]:
    session = Session(tmp_path)
    session.project(hooks(PreToolUse=[
        group(command("echo 'rm is not allowed' >&2; exit 2", **{"if": "Bash(rm *)"}),
              command("echo 'no pushes' >&2; exit 2", **{"if": "Bash(git push *)"}),
              matcher="Bash"),
        group(command(ENV_GUARD), matcher="Write|Edit")]))
    try:
        session.start()
        yield VSCode(session)
    finally:
        session.stop()


def cases(ws: Path) -> dict[str, dict[str, Any]]:
    return {"rm -rf": shell("rm -rf /tmp/x"),
            "force push": shell("git push --force origin main"),
            "create .env": create(str(ws / ".env")),
            "edit .env": edit(str(ws / ".env"), "A=1", "A=2")}


@pytest.mark.parametrize("case", ["rm -rf", "force push", "create .env", "edit .env"])
def test_a_claude_guard_blocks_vscode(guarded: VSCode, case: str) -> None:
    """Brief (5): "must give YOUR agent's documented 'blocked' answer for your agent's
    real payload of `rm -rf /tmp/x`, `git push --force origin main`, and a write of
    `.env`". VS Code's shell tool is `run_in_terminal` {command, ...}, its writes
    `create_file`/`replace_string_in_file` {filePath, ...} (HOOKS_JUNE FAQ: "Claude Code
    uses `Write` and `Edit` for file operations, while VS Code uses tool names like
    `create_file` and `replace_string_in_file`"; "`tool_input.filePath`"). LOCAL: exit 2
    "block[s] the current operation"; a deny "denies" the tool call."""
    sent = cases(guarded.s.ws)[case]
    validate(sent, schema("hook-input", "PreToolUse"))
    answer = read_answer("PreToolUse", guarded.emit(sent))
    assert blocked(answer), answer
    assert_valid(answer)


def test_ls_is_allowed(guarded: VSCode) -> None:
    """Brief (5): "... and allow `ls`." (No hook denies: VS Code's answer is no deny.)"""
    proc = guarded.emit(shell("ls"))
    answer = read_answer("PreToolUse", proc)
    assert not blocked(answer), answer
    assert proc.returncode == 0, proc.stderr  # an allow, not a warning
    assert_valid(answer)


def test_a_read_of_env_is_not_a_write(guarded: VSCode) -> None:
    """The `.env` guard's matcher is `Write|Edit`: VS Code's read_file is Claude's Read,
    which it does not match (HOOKS_JUNE FAQ, tool names differ by harness)."""
    sent = {**shell("x"), "tool_name": "read_file",
            "tool_input": {"filePath": str(guarded.s.ws / ".env"), "startLine": 1,
                           "endLine": 5}}
    proc = guarded.emit(sent)
    assert not blocked(read_answer("PreToolUse", proc))
    assert proc.returncode == 0, proc.stderr


@pytest.fixture
def vs(tmp_path: Path) -> Iterator[VSCode]:
    session = Session(tmp_path)
    try:
        yield VSCode(session)
    finally:
        session.stop()


def claude_bash(ws: Path, line: str) -> dict[str, Any]:
    return {"session_id": "cc-1", "transcript_path": "/tmp/t.jsonl", "cwd": str(ws),
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": line, "description": "x"},
            "tool_use_id": "toolu_01ABC123"}


def test_a_vscode_hook_sees_vscodes_shape_when_claude_sends_bash(vs: VSCode) -> None:
    """Brief, interface (2): "A hook gets on stdin the payload in ITS OWN agent's shape".
    A VS Code hook sees the Local harness's shape: `hook_event_name`, `session_id`
    (LOCAL, "Common input"), tool `run_in_terminal` with `tool_input.command` (SRC
    toolNames.ts, IRunInTerminalInputParams)."""
    vs.workspace("record", vhooks(PreToolUse=cmd(vs.s.record("seen"))))
    vs.s.start()
    vs.emit_claude(claude_bash(vs.s.ws, "rm -rf /tmp/x"))
    seen = vs.s.seen("seen")
    assert seen["hook_event_name"] == "PreToolUse"
    assert seen["tool_name"] == SHELL
    assert seen["tool_input"]["command"] == "rm -rf /tmp/x"
    validate(seen, schema("hook-input", "PreToolUse"))


def test_a_vscode_hook_sees_create_file_when_claude_writes(vs: VSCode) -> None:
    """HOOKS_JUNE FAQ: Claude's `Write` is VS Code's `create_file`, and "Claude Code uses
    snake_case for tool input properties (for example, `tool_input.file_path`), while VS
    Code tools use camelCase (for example, `tool_input.filePath`)."""
    vs.workspace("record", vhooks(PreToolUse=cmd(vs.s.record("seen"))))
    vs.s.start()
    sent = {**claude_bash(vs.s.ws, ""), "tool_name": "Write",
            "tool_input": {"file_path": str(vs.s.ws / "a.txt"), "content": "hi"}}
    vs.emit_claude(sent)
    seen = vs.s.seen("seen")
    assert seen["tool_name"] == CREATE
    assert seen["tool_input"]["filePath"] == str(vs.s.ws / "a.txt")
    assert seen["tool_input"]["content"] == "hi"


def test_a_vscode_guard_blocks_claudes_bash(vs: VSCode) -> None:
    """Issue 37, "One set of guards for every agent": "A guard the image ships (in any
    format initd reads) holds for every agent's events". A .github/hooks deny (exit 2,
    LOCAL) is Claude Code's exit 2 (its "blocking error")."""
    vs.workspace("guard", vhooks(PreToolUse=cmd(exits(2, "vscode says no"))))
    vs.s.start()
    proc = vs.emit_claude(claude_bash(vs.s.ws, "rm -rf /tmp/x"))
    assert proc.returncode == 2 or '"deny"' in proc.stdout, proc
