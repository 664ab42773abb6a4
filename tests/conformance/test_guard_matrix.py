"""The guard matrix, whole: the same three guards (no ``rm -rf``, no force push, no write to
``.env``), written once in each hook format initd reads, hold for every agent's real
payload, and each agent gets its own "blocked" answer, read as that agent reads it (each
conformance suite's ``read_answer``); the same guards let ``ls`` through for each.

Each guard reads the event as its own format's hooks get it, in its agent's words
(guard.py below is told which fields): Claude Code's ``tool_input.command`` and
``tool_input.file_path``; Codex's ``tool_input.command``, the patch of an
``apply_patch``; Gemini CLI's ``run_shell_command`` and ``write_file``; Cursor's
``beforeShellExecution`` ``command`` and its ``Write`` tool; VS Code's
``run_in_terminal`` and ``create_file`` ``filePath``; a discobot event script, initd's
shape (Claude Code's). Each agent's payloads are its own suite's builders, from its
reference: Claude Code's (code.claude.com/docs/en/hooks, August 2026), Codex's
(@openai/codex 0.171.0's schemas), Gemini CLI's (geminicli.com/docs/hooks/reference,
2026-09), Cursor's (cursor.com/docs/agent/hooks, 2026-08-24), VS Code's
(code.visualstudio.com/docs/agents/reference/hooks-reference, 2026-09-16).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance import (
    claude_current_support,
    codex_hooks_answers,
    codex_hooks_support,
    cursor_hooks_answers,
    cursor_hooks_support,
    gemini_hooks_answer,
    gemini_hooks_support,
    vscode_hooks_answers,
    vscode_hooks_support,
)
from tests.conformance.claude_hooks_support import INITD, Session

pytestmark = pytest.mark.timeout(300)

# the guard: exit 2 and a reason on stderr (a block, in every format's terms) when one of
# the fields named holds rm -rf, a force push or the path of a .env
GUARD = r'''
import json, re, sys
data = json.load(sys.stdin)
for path in sys.argv[1:]:
    value = data
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    text = value if isinstance(value, str) else ""
    for why, pattern in (("rm -rf", r"\brm\s+-rf\b"),
                         ("a force push", r"\bgit\s+push\b.*\s(--force|-f)\b"),
                         ("a write to .env", r"(^|[\s/:])\.env\s*$")):
        if re.search(pattern, text, re.M):
            print(f"{sys.argv[0]}: no {why}", file=sys.stderr)
            sys.exit(2)
'''
SHELL, FILE = "shell", "file"


def guard(s: Session, *fields: str) -> str:
    program = s.root / "guard.py"
    program.write_text(GUARD)
    return f"python3 {program} {' '.join(fields)}"


# each format's guards, written where it reads them (the workspace's own file)
def claude_code(s: Session) -> None:
    line = guard(s, "tool_input.command", "tool_input.file_path")
    hook = {"type": "command", "command": line}
    s.project({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]},
                                        {"matcher": "Write|Edit", "hooks": [hook]}]}})


def codex(s: Session) -> None:
    hook = {"type": "command", "command": guard(s, "tool_input.command")}
    put(s.ws / ".codex" / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [hook]}, {"matcher": "apply_patch", "hooks": [hook]}]}})


def gemini(s: Session) -> None:
    hook = {"type": "command", "command": guard(s, "tool_input.command",
                                                "tool_input.file_path")}
    put(s.ws / ".gemini" / "settings.json", {"hooks": {"BeforeTool": [
        {"matcher": "run_shell_command", "hooks": [hook]},
        {"matcher": "write_file|replace", "hooks": [hook]}]}})


def cursor(s: Session) -> None:
    put(s.ws / ".cursor" / "hooks.json", {"version": 1, "hooks": {
        "beforeShellExecution": [{"command": guard(s, "command")}],
        "preToolUse": [{"command": guard(s, "tool_input.file_path"), "matcher": "Write"}]}})


def vscode(s: Session) -> None:
    put(s.ws / ".github" / "hooks" / "guards.json", {"hooks": {"PreToolUse": [
        {"type": "command", "command": guard(s, "tool_input.command",
                                             "tool_input.filePath")}]}})


def discobot(s: Session) -> None:
    script = s.ws / ".discobot" / "hooks" / "10-guard"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("#!/bin/sh\n#---\n# type: pre_tool\n#---\n"
                      f"exec {guard(s, 'tool_input.command', 'tool_input.file_path')}\n")
    script.chmod(0o755)


def put(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


FORMATS: dict[str, Callable[[Session], None]] = {
    "claude": claude_code, "codex": codex, "gemini": gemini, "cursor": cursor,
    "vscode": vscode, "discobot": discobot}


# each agent's real payloads: (its event's name, the payload) for a shell line, a write
def claude_sends(ws: Path, kind: str, said: str) -> tuple[str, dict[str, Any]]:
    tool = ({"tool_name": "Bash", "tool_input": {"command": said}} if kind == SHELL else
            {"tool_name": "Write", "tool_input": {"file_path": said, "content": "TOKEN=1\n"}})
    return "PreToolUse", {**claude_current_support.payload("PreToolUse"), "cwd": str(ws),
                          **tool}


def codex_sends(ws: Path, kind: str, said: str) -> tuple[str, dict[str, Any]]:
    if kind == SHELL:
        return "PreToolUse", codex_hooks_support.bash(ws, said)
    return "PreToolUse", codex_hooks_support.patch_adding(ws, Path(said).name, "TOKEN=1")


def gemini_sends(ws: Path, kind: str, said: str) -> tuple[str, dict[str, Any]]:
    fake = type("S", (), {"ws": ws, "home": ws.parent / "home"})
    if kind == SHELL:
        return "BeforeTool", gemini_hooks_support.tool(fake, "run_shell_command",  # type: ignore[arg-type]
                                                       command=said)
    return "BeforeTool", gemini_hooks_support.tool(fake, "write_file",  # type: ignore[arg-type]
                                                   file_path=said, content="TOKEN=1\n")


def cursor_sends(ws: Path, kind: str, said: str) -> tuple[str, dict[str, Any]]:
    fake = type("S", (), {"ws": ws})
    if kind == SHELL:
        return "beforeShellExecution", cursor_hooks_support.payload(
            "beforeShellExecution", fake, command=said)  # type: ignore[arg-type]
    return "preToolUse", cursor_hooks_support.payload(
        "preToolUse", fake, tool_name="Write",  # type: ignore[arg-type]
        tool_input={"file_path": said, "contents": "TOKEN=1\n"})


def vscode_sends(ws: Path, kind: str, said: str) -> tuple[str, dict[str, Any]]:
    made = vscode_hooks_support.shell(said) if kind == SHELL else \
        vscode_hooks_support.create(said)
    return "PreToolUse", {**made, "cwd": str(ws)}


AGENTS: dict[str, tuple[Callable[[Path, str, str], tuple[str, dict[str, Any]]],
                        Callable[[str, subprocess.CompletedProcess[str]], Any]]] = {
    "claude": (claude_sends, claude_current_support.read_answer),
    "codex": (codex_sends, codex_hooks_answers.read_answer),
    "gemini": (gemini_sends, gemini_hooks_answer.read_answer),
    "cursor": (cursor_sends, cursor_hooks_answers.read_answer),
    "vscode": (vscode_sends, vscode_hooks_answers.read_answer)}
# whether an answer is the agent's "blocked" (VS Code's suite reads it with a function)
BLOCKED: dict[str, Callable[[Any], bool]] = {
    "vscode": vscode_hooks_answers.blocked}


def denies(ws: Path) -> dict[str, tuple[str, str]]:
    return {"rm -rf": (SHELL, "rm -rf /tmp/x"),
            "force push": (SHELL, "git push --force origin main"),
            ".env": (FILE, f"{ws}/.env")}


@pytest.fixture(params=list(FORMATS))
def guarded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Session]:
    session = Session(tmp_path)
    FORMATS[request.param](session)
    try:
        session.start()
        yield session
    finally:
        session.stop()


def ask(s: Session, agent: str, kind: str, said: str) -> Any:
    """``initd emit --from AGENT`` with the agent's payload, read as the agent reads it."""
    sends, read = AGENTS[agent]
    event, data = sends(s.ws, kind, said)
    done = subprocess.run([*INITD, "emit", "--from", agent, "--socket", s.sock],
                          input=json.dumps(data), capture_output=True, text=True,
                          timeout=120, cwd=str(s.ws), env={
                              "PATH": "/usr/bin:/bin", "HOME": str(s.home)})
    return read(event, done)


def blocked(agent: str, answer: Any) -> bool:
    return BLOCKED[agent](answer) if agent in BLOCKED else bool(answer.blocked)


@pytest.mark.parametrize("agent", list(AGENTS))
def test_a_guard_written_once_blocks_every_agent(guarded: Session, agent: str) -> None:
    """Issue 37's matrix: each guard's deny, through each agent's payload, is that agent's
    own "blocked"; ``ls`` and a write of another file are not."""
    wrong = []
    for case, (kind, said) in denies(guarded.ws).items():
        answer = ask(guarded, agent, kind, said)
        if not blocked(agent, answer):
            wrong.append(f"{case}: not blocked: {answer}")
    for kind, said in ((SHELL, "ls -la"), (FILE, f"{guarded.ws}/notes.txt")):
        answer = ask(guarded, agent, kind, said)
        if blocked(agent, answer):
            wrong.append(f"{said}: blocked: {answer}")
    assert wrong == []
