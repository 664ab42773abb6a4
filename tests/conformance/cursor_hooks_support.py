"""What the Cursor hooks conformance tests share: Cursor's own hooks files
(``.cursor/hooks.json``, ``~/.cursor/hooks.json``, ``/etc/cursor/hooks.json``), the
payloads Cursor writes on a hook's stdin, and ``initd emit --from cursor`` run the way
Cursor runs a command hook. How its answer reads is in cursor_hooks_answers.py.

The service is claude_hooks_support.Session (HOME of its own; as root, /etc an overlay of
the test's own), started after the files are written (initd snapshots them at its start).

The reference is Cursor's public documentation (research notes: /work/wt/research/cursor.md):

- HOOKS = https://cursor.com/docs/agent/hooks (now also /docs/hooks), the revision
  fetched 2026-08-24 (hooks of 21 events; "Project hooks ... Run from the project root").
- THIRD = https://cursor.com/docs/reference/third-party-hooks, same period (Claude Code
  hooks loaded by Cursor, "on by default").
- CONTRACT = py-cursor-hooks 0.1.1 (PyPI), its pydantic models as a JSON Schema in
  contracts/cursor/ (see its README).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.conformance.claude_hooks_support import AS_ROOT, INITD, Session, q

HOOKS = "https://cursor.com/docs/agent/hooks (revision of 2026-08-24)"
THIRD = "https://cursor.com/docs/reference/third-party-hooks (revision of 2026-08-24)"

# HOOKS "Hook categories": Agent hooks, Tab hooks, App lifecycle hooks.
AGENT_EVENTS = ["sessionStart", "sessionEnd", "preToolUse", "postToolUse",
                "postToolUseFailure", "subagentStart", "subagentStop",
                "beforeShellExecution", "afterShellExecution", "beforeMCPExecution",
                "afterMCPExecution", "beforeReadFile", "afterFileEdit", "beforeSubmitPrompt",
                "preCompact", "stop", "afterAgentResponse", "afterAgentThought"]
TAB_EVENTS = ["beforeTabFileRead", "afterTabFileEdit"]
APP_EVENTS = ["workspaceOpen"]
EVENTS = [*AGENT_EVENTS, *TAB_EVENTS, *APP_EVENTS]

# The events whose answer can stop the action: a permission (allow/deny[/ask]) or, for
# beforeSubmitPrompt, `continue` (HOOKS, each event's "Output").
PERMISSION_EVENTS = ["preToolUse", "subagentStart", "beforeShellExecution",
                     "beforeMCPExecution", "beforeReadFile", "beforeTabFileRead"]
GUARD_EVENTS = [*PERMISSION_EVENTS, "beforeSubmitPrompt"]

CURSOR_VERSION = "2.4.21"
CONVERSATION = "668320d2-2fd8-4888-b33c-2a466fec86e7"
GENERATION = "490b90b7-a2ce-4c2c-bb76-cb77b125df2f"


def own_fields(event: str, ws: str) -> dict[str, Any]:
    """The event's own input fields, as HOOKS' "// Input" example of the event shows them
    (paths made real: the workspace ``ws``)."""
    shell_input = {"command": "npm install", "working_directory": ws}
    own: dict[str, dict[str, Any]] = {
        "sessionStart": {"session_id": CONVERSATION, "is_background_agent": False,
                         "composer_mode": "agent"},
        "sessionEnd": {"session_id": CONVERSATION, "reason": "completed",
                       "duration_ms": 45000, "is_background_agent": False,
                       "final_status": "completed"},
        "preToolUse": {"tool_name": "Shell", "tool_input": shell_input,
                       "tool_use_id": "abc123", "cwd": ws,
                       "agent_message": "Installing dependencies..."},
        "postToolUse": {"tool_name": "Shell", "tool_input": {"command": "npm test"},
                        "tool_output": "{\"exitCode\":0,\"stdout\":\"All tests passed\"}",
                        "tool_use_id": "abc123", "cwd": ws, "duration": 5432},
        "postToolUseFailure": {"tool_name": "Shell", "tool_input": {"command": "npm test"},
                               "tool_use_id": "abc123", "cwd": ws,
                               "error_message": "Command timed out after 30s",
                               "failure_type": "timeout", "duration": 5000,
                               "is_interrupt": False},
        "subagentStart": {"subagent_id": "abc-123", "subagent_type": "generalPurpose",
                          "task": "Explore the authentication flow",
                          "parent_conversation_id": CONVERSATION, "tool_call_id": "tc-789",
                          "subagent_model": "claude-sonnet-4-20250514",
                          "is_parallel_worker": False, "git_branch": "feature/auth"},
        "subagentStop": {"subagent_type": "generalPurpose", "status": "completed",
                         "task": "Explore the authentication flow",
                         "description": "Exploring auth flow", "summary": "Auth is in src/",
                         "duration_ms": 45000, "message_count": 12, "tool_call_count": 8,
                         "loop_count": 0, "modified_files": ["src/auth.ts"],
                         "agent_transcript_path": None},
        "beforeShellExecution": {"command": "npm install", "cwd": ws, "sandbox": False},
        "afterShellExecution": {"command": "npm install", "output": "added 1 package",
                                "duration": 1234, "sandbox": False},
        "beforeMCPExecution": {"tool_name": "create_issue",
                               "tool_input": "{\"title\": \"Bug\"}",
                               "mcp_server_name": "linear", "command": "npx linear-mcp"},
        "afterMCPExecution": {"tool_name": "create_issue",
                              "tool_input": "{\"title\": \"Bug\"}",
                              "mcp_server_name": "linear",
                              "result_json": "{\"id\": \"LIN-1\"}", "duration": 1234},
        "beforeReadFile": {"file_path": f"{ws}/README.md", "content": "# readme\n",
                           "attachments": [{"type": "rule",
                                            "file_path": f"{ws}/.cursor/rules/a.mdc"}]},
        "afterFileEdit": {"file_path": f"{ws}/src/main.ts",
                          "edits": [{"old_string": "const foo = 1",
                                     "new_string": "const foo = 2"}]},
        "beforeSubmitPrompt": {"prompt": "Fix the bug in main.ts",
                               "attachments": [{"type": "file",
                                                "file_path": f"{ws}/src/main.ts"}]},
        "preCompact": {"trigger": "auto", "context_usage_percent": 85,
                       "context_tokens": 120000, "context_window_size": 128000,
                       "message_count": 45, "messages_to_compact": 30,
                       "is_first_compaction": True},
        "stop": {"status": "completed", "loop_count": 0},
        "afterAgentResponse": {"text": "Done: the bug is fixed."},
        "afterAgentThought": {"text": "The test fails because...", "duration_ms": 5000},
        "beforeTabFileRead": {"file_path": f"{ws}/src/main.ts", "content": "const foo = 1\n"},
        "afterTabFileEdit": {"file_path": f"{ws}/src/main.ts", "edits": [{
            "old_string": "foo", "new_string": "bar",
            "range": {"start_line_number": 1, "start_column": 7, "end_line_number": 1,
                      "end_column": 10},
            "old_line": "const foo = 1", "new_line": "const bar = 1"}]},
        "workspaceOpen": {},
    }
    return own[event]


def payload(event: str, cs: Session | None = None, **more: Any) -> dict[str, Any]:
    """What Cursor writes on a hook's stdin for ``event``: HOOKS' "Common schema" fields
    (workspaceOpen: only hook_event_name, cursor_version, workspace_roots, user_email),
    then the event's own, then ``more``."""
    ws = str(cs.ws) if cs is not None else "/home/u/project"
    common: dict[str, Any] = {
        "conversation_id": CONVERSATION, "generation_id": GENERATION,
        "model": "claude-opus-4-7-thinking-max", "hook_event_name": event,
        "cursor_version": CURSOR_VERSION, "workspace_roots": [ws], "user_email": None,
        "transcript_path": None}
    if event in APP_EVENTS:
        common = {k: common[k] for k in ("hook_event_name", "cursor_version",
                                         "workspace_roots", "user_email")}
    return {**common, **own_fields(event, ws), **more}


# -- hooks.json ------------------------------------------------------------------------


def entry(command: str, **options: Any) -> dict[str, Any]:
    """One hook definition: HOOKS "Per-Script Configuration Options" (command, type,
    timeout, loop_limit, failClosed, matcher)."""
    return {"command": command, **options}


def hooks_json(**events: list[dict[str, Any]] | dict[str, Any]) -> dict[str, Any]:
    """``{"version": 1, "hooks": {event: [definitions]}}``; one definition may be bare."""
    return {"version": 1, "hooks": {name: (value if isinstance(value, list) else [value])
                                    for name, value in events.items()}}


def project(cs: Session, config: dict[str, Any] | str) -> Path:
    """``<project-root>/.cursor/hooks.json`` (a str is written as it is)."""
    return _put(cs, cs.ws / ".cursor" / "hooks.json", config)


def user(cs: Session, config: dict[str, Any] | str) -> Path:
    """``~/.cursor/hooks.json``."""
    return _put(cs, cs.home / ".cursor" / "hooks.json", config)


def enterprise(cs: Session, config: dict[str, Any] | str) -> Path:
    """``/etc/cursor/hooks.json`` (Linux), as this session's service sees it."""
    if not AS_ROOT:
        import pytest

        pytest.skip("an /etc/cursor/hooks.json of the test's own needs root (a mount "
                    "namespace with /etc as an overlay)")
    return _put(cs, cs.etc_upper / "cursor" / "hooks.json", config)


def _put(cs: Session, path: Path, config: dict[str, Any] | str) -> Path:
    if isinstance(config, str):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(config)
        return path
    return cs._write(path, config)


def script(directory: Path, name: str, body: str) -> Path:
    """An executable bash script ``directory/name``."""
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/bash\n" + body + "\n")
    path.chmod(0o755)
    return path


def answering(cs: Session, name: str, text: str, code: int = 0) -> str:
    """A hook command that records its stdin as ``name`` and answers ``text`` on stdout
    with exit ``code``."""
    return f"{cs.record(name)}; printf '%s' {q(text)}; exit {code}"


def deny_if(cs: Session, name: str, pattern: str, reason: str) -> str:
    """A Cursor guard: records its stdin; ``permission: deny`` (with user_message and
    agent_message ``reason``) when the stdin matches the ERE ``pattern``, else allow."""
    deny = json.dumps({"permission": "deny", "user_message": reason, "agent_message": reason})
    allow = json.dumps({"permission": "allow"})
    saved = cs.out / f"{name}.json"
    return (f"{cs.record(name)}; if grep -Eq {q(pattern)} {q(saved)}; "
            f"then printf '%s' {q(deny)}; else printf '%s' {q(allow)}; fi")


# -- initd emit --from cursor -----------------------------------------------------------


def hook_env(cs: Session, socket: str | None = None) -> dict[str, str]:
    """The environment Cursor gives a hook (HOOKS "Environment Variables":
    CURSOR_PROJECT_DIR, CURSOR_VERSION, CLAUDE_PROJECT_DIR always), and INITD_SOCKET."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("INITD_", "CLAUDE_", "CURSOR_"))}
    env.update({"HOME": str(cs.home), "CURSOR_PROJECT_DIR": str(cs.ws),
                "CLAUDE_PROJECT_DIR": str(cs.ws), "CURSOR_VERSION": CURSOR_VERSION})
    if socket is not None or cs.sock:
        env["INITD_SOCKET"] = socket if socket is not None else cs.sock
    return env


def emit_from(cs: Session, data: dict[str, Any] | str, event: str | None = None, *,
              socket: str | None = None, use_flag: bool = False,
              env: dict[str, str] | None = None,
              timeout: float = 100) -> subprocess.CompletedProcess[str]:
    """``initd emit --from cursor [EVENT]`` as Cursor runs a user hook (the shim's line
    lives in ~/.cursor/hooks.json, and "User hooks ... Run from ~/.cursor/"): the payload
    on stdin, Cursor's environment, the socket in INITD_SOCKET (``--socket`` when
    ``use_flag``)."""
    where = socket if socket is not None else cs.sock
    argv = [*INITD, "emit", "--from", "cursor", *([event] if event else [])]
    base = hook_env(cs, where)
    if use_flag:
        argv += ["--socket", base.pop("INITD_SOCKET")]
    base.update(env or {})
    cwd = cs.home / ".cursor"
    cwd.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data)
    return subprocess.run(argv, input=text, capture_output=True, text=True,
                          timeout=timeout, cwd=str(cwd), env=base)


def shim(cs: Session, *args: str) -> subprocess.CompletedProcess[str]:
    """``initd shim cursor [ARGS]`` as the user (HOME of the session's own)."""
    return subprocess.run([*INITD, "shim", "cursor", *args], capture_output=True, text=True,
                          timeout=60, cwd=str(cs.ws), env=hook_env(cs))
