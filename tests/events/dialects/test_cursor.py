"""Cursor's hooks run by initd for events of initd's own shape (another agent's, or
``initd emit``): the reference's configuration example (https://cursor.com/docs/agent/hooks,
revision of 2026-08-24, "Configuration file", tests/events/fixtures/cursor/hooks.json,
unchanged) as the user's ``~/.cursor/hooks.json``, its scripts stand-ins that record
where they ran and what they read. Each Cursor hook reads the event in its own event's
shape ("// Input" of each event), from ``~/.cursor`` ("User hooks ... Run from
`~/.cursor/`"). (Cursor's own payloads are the conformance suite's:
tests/conformance/test_cursor_hooks_*.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from initd.events.dialects import cursor
from tests.events.support import Workspace

FIXTURE = Path(__file__).parent.parent / "fixtures" / "cursor" / "hooks.json"
SCRIPTS = ("session-init.sh", "audit.sh", "script.sh", "format.sh", "redact-secrets-tab.sh",
           "format-tab.sh", "register-workspace-plugins.sh", "hooks/validate-tool.sh",
           "hooks/audit-tool.sh", "hooks/validate-subagent.sh", "hooks/audit-subagent.sh")
# each call: its script, its working directory, what it read on stdin
RECORDER = ('#!/bin/sh\nprintf \'{"script": "%s", "pwd": "%s", "stdin": %s}\\n\' '
            '"$(basename "$0")" "$PWD" "$(cat)" >> "$CALLS"\n')


@pytest.fixture
def calls(ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    cursor = home / ".cursor"
    (cursor / "hooks").mkdir(parents=True)
    shutil.copy(FIXTURE, cursor / "hooks.json")
    for name in SCRIPTS:
        (cursor / name).write_text(RECORDER)
        (cursor / name).chmod(0o755)
    ws.home = str(home)
    recorded = tmp_path / "calls"
    monkeypatch.setenv("CALLS", str(recorded))
    return recorded


def fired(ws: Workspace, calls: Path, event: str, payload: dict[str, Any]
          ) -> dict[str, dict[str, Any]]:
    """What each script read for ``event`` (none may run twice), from ~/.cursor."""
    if calls.exists():
        calls.unlink()
    outcome = ws.fire(event, payload)
    assert not outcome["blocked"], outcome
    seen = [json.loads(line) for line in calls.read_text().splitlines()] \
        if calls.exists() else []
    assert {c["pwd"] for c in seen} <= {f"{ws.home}/.cursor"}, seen
    by_script = {c["script"]: c["stdin"] for c in seen}
    assert len(by_script) == len(seen), seen
    return by_script


def test_the_reference_example_loads_whole(ws: Workspace, calls: Path) -> None:
    ws.fire("session_start", {"source": "startup"})
    assert ws.engine is not None
    found = ws.engine.cache.get()
    mine = [h for h in found.hooks if h.dialect == "cursor"]
    assert len(mine) == 15 and found.problems == [] and found.unread == []


def test_a_bash_call_is_preToolUse_and_beforeShellExecution(ws: Workspace,
                                                            calls: Path) -> None:
    seen = fired(ws, calls, "pre_tool", {"tool_name": "Bash", "tool_use_id": "t1",
                                         "tool_input": {"command": "npm test"}})
    assert sorted(seen) == ["script.sh", "validate-tool.sh"]
    tool, shell = seen["validate-tool.sh"], seen["script.sh"]
    assert (tool["hook_event_name"], tool["tool_name"], tool["tool_input"]["command"],
            tool["tool_use_id"]) == ("preToolUse", "Shell", "npm test", "t1")
    assert (shell["hook_event_name"], shell["command"], shell["cwd"]) == (
        "beforeShellExecution", "npm test", str(ws.path))
    assert shell["workspace_roots"] == [str(ws.path)] and "tool_name" not in shell


def test_a_task_is_subagentStart(ws: Workspace, calls: Path) -> None:
    """"subagentStart / subagentStop - Subagent (Task tool) lifecycle"; the example's
    preToolUse matcher (Shell|Read|Write) does not take a Task."""
    seen = fired(ws, calls, "pre_tool", {"tool_name": "Task", "tool_use_id": "t2",
                                         "tool_input": {"subagent_type": "Explore",
                                                        "prompt": "find the auth code"}})
    assert list(seen) == ["validate-subagent.sh"]
    sub = seen["validate-subagent.sh"]
    assert (sub["subagent_type"], sub["task"], sub["tool_call_id"]) == (
        "Explore", "find the auth code", "t2")


def test_a_write_is_postToolUse_and_afterFileEdit(ws: Workspace, calls: Path) -> None:
    path = str(ws.path / "src" / "a.ts")
    seen = fired(ws, calls, "post_tool", {
        "tool_name": "Write", "tool_input": {"file_path": path, "content": "x = 1\n"},
        "tool_response": {"filePath": path, "success": True}, "tool_use_id": "t3"})
    assert sorted(seen) == ["audit-tool.sh", "format.sh"]
    tool, edit = seen["audit-tool.sh"], seen["format.sh"]
    assert (tool["tool_name"], tool["tool_input"], json.loads(tool["tool_output"])) == (
        "Write", {"file_path": path, "contents": "x = 1\n"}, {"filePath": path,
                                                              "success": True})
    assert (edit["file_path"], edit["edits"]) == (
        path, [{"old_string": "", "new_string": "x = 1\n"}])


def test_an_mcp_tool_is_afterMCPExecution(ws: Workspace, calls: Path) -> None:
    seen = fired(ws, calls, "post_tool", {
        "tool_name": "mcp__linear__create_issue", "tool_input": {"title": "Bug"},
        "tool_response": {"id": "LIN-1"}, "tool_use_id": "t4"})
    assert sorted(seen) == ["audit-tool.sh", "script.sh"]
    assert seen["audit-tool.sh"]["tool_name"] == "MCP:create_issue"
    mcp = seen["script.sh"]
    assert (mcp["hook_event_name"], mcp["tool_name"], mcp["mcp_server_name"]) == (
        "afterMCPExecution", "create_issue", "linear")
    assert json.loads(mcp["tool_input"]) == {"title": "Bug"}
    assert json.loads(mcp["result_json"]) == {"id": "LIN-1"}


def test_a_stop_is_stop_with_its_loop_count(ws: Workspace, calls: Path) -> None:
    seen = fired(ws, calls, "stop", {"stop_hook_active": True,
                                     "last_assistant_message": "Done."})
    assert list(seen) == ["audit.sh"]
    stop = seen["audit.sh"]
    assert (stop["hook_event_name"], stop["status"], stop["loop_count"]) == (
        "stop", "completed", 1)
    assert "stop_hook_active" not in stop and "last_assistant_message" not in stop


# --- the loader itself (initd/events/dialects/cursor.py), on files of the test's own


def cursor_files(tmp_path: Path, project: object = None, user: object = None
                 ) -> tuple[str, str]:
    ws, home = tmp_path / "cws", tmp_path / "chome"
    for folder, data in ((ws, project), (home, user)):
        (folder / ".cursor").mkdir(parents=True, exist_ok=True)
        if data is not None:
            (folder / ".cursor" / "hooks.json").write_text(
                data if isinstance(data, str) else json.dumps(data))
    return str(ws), str(home)


def test_the_loader_reads_the_project_then_the_user(tmp_path: Path) -> None:
    limits: dict[str, int | None] = {}
    ws, home = cursor_files(tmp_path, {"version": 1, "hooks": {
        "beforeShellExecution": [{"command": "./guard.sh", "matcher": "rm", "failClosed":
                                  True}], "stop": [{"command": "again", "loop_limit": 2}]}},
        {"hooks": {"afterFileEdit": [{"command": "fmt"}]}})
    found = cursor.load(ws, home, limits)
    assert [(h.event, h.label, h.on_error, h.workspace) for h in found.hooks] == [
        ("pre_tool", "./guard.sh", "deny", True), ("stop", "again", "allow", True),
        ("post_tool", "fmt", "allow", False)]
    assert list(limits.values()) == [2] and found.problems == []


@pytest.mark.parametrize(("data", "said"), [
    ([1], "expected a JSON object (Cursor's hooks.json)"),
    ({"version": 2, "hooks": {}}, "version 2: initd reads Cursor's hooks.json of version 1"),
    ({"hooks": []}, "expected a mapping of event name"),
    ({"hooks": {"stop": [{"type": "prompt", "prompt": "done?"}]}},
     'a "prompt" hook asks Cursor\'s model'),
    ({"hooks": {"beforeShellExecution": [{"command": "x", "matcher": "(?=rm)"}]}},
     "matcher: '(?=rm)'"),
    ({"hooks": {"stop": [{"command": "x", "loop_limit": -1}]}},
     "loop_limit: expected a whole number >= 0 or null"),
    ({"hooks": {"beforeShellExecutionn": [{"command": "x"}]}},
     "unknown Cursor hook event 'beforeShellExecutionn'"),
])
def test_what_the_loader_refuses_names_file_and_key(tmp_path: Path, data: object,
                                                    said: str) -> None:
    found = cursor.load(*cursor_files(tmp_path, data), {})
    assert any(said in p.text for p in found.problems), [p.text for p in found.problems]
    assert found.hooks == []
