"""VS Code's agent hooks as initd loads them (initd/events/dialects/vscode.py): the
workspace's ``.github/hooks`` and the user's ``~/.copilot/hooks``, Copilot's names too,
each command as ``sh -c`` runs it (its cwd and env quoted, never parsed), and every
command initd cannot load an error that stands in on its event (fail closed where VS
Code goes on). The harness's own reading: tests/conformance/test_vscode_hooks_*."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from initd.events.dialects import vscode
from initd.events.model import Command


def put(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def load(tmp_path: Path, hooks: Any, name: str = "guard.json") -> vscode.Collected:
    ws, home = tmp_path / "ws", tmp_path / "home"
    home.mkdir(exist_ok=True)
    put(ws / ".github" / "hooks" / name, hooks)
    return vscode.load(str(ws), str(home))


def errors(found: vscode.Collected) -> list[str]:
    return [p.text for p in found.problems if p.severity == "error"]


def test_the_workspaces_and_the_users_files_in_order(tmp_path: Path) -> None:
    put(tmp_path / "home" / ".copilot" / "hooks" / "mine.json",
        {"hooks": {"Stop": [{"type": "command", "command": "user"}]}})
    found = load(tmp_path, {"hooks": {"PreToolUse": [{"command": "a"}, {"command": "b"}]}})
    put(tmp_path / "ws" / ".github" / "hooks" / "notes.txt", "not a hook file")
    assert [(h.event, h.label, h.workspace) for h in found.hooks] == [
        ("pre_tool", "a", True), ("pre_tool", "b", True), ("stop", "user", False)]
    assert found.hooks[1].timeout == vscode.DEFAULT_TIMEOUT and errors(found) == []


def test_copilots_names_and_claude_codes_matcher_groups(tmp_path: Path) -> None:
    found = load(tmp_path, {"version": 1, "hooks": {
        "agentStop": [{"bash": "echo stop", "timeoutSec": 5}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"command": "guard"}]}]}})
    assert [(h.event, h.label, h.timeout) for h in found.hooks] == [
        ("stop", "echo stop", 5.0), ("pre_tool", "guard", 30.0)]
    assert [p.key for p in found.problems] == ["hooks.PreToolUse[0].matcher"]  # ignored


def test_a_command_runs_from_its_cwd_with_its_env_never_parsed(tmp_path: Path) -> None:
    (tmp_path / "ws" / "sub dir").mkdir(parents=True)
    found = load(tmp_path, {"hooks": {"Stop": [{
        "command": 'pwd; printf "%s" "$V"', "cwd": "sub dir",
        "env": {"V": "$(touch pwned) `id` ; rm -rf /"}}]}})
    [hook] = found.hooks
    assert isinstance(hook.spec, Command) and hook.spec.shell == "sh"
    out = subprocess.run(["sh", "-c", hook.spec.command], capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    assert out.stdout == f"{tmp_path / 'ws' / 'sub dir'}\n$(touch pwned) `id` ; rm -rf /"
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "ws" / "pwned").exists()


def test_a_cwd_in_the_home_or_absolute(tmp_path: Path) -> None:
    assert vscode._cwd("~/x", "/ws", "/home/a") == "/home/a/x"
    assert vscode._cwd("/abs", "/ws", "/home/a") == "/abs"
    assert vscode._cwd("a/../b", "/ws", "/home/a") == "/ws/b"
    assert vscode._cwd(None, "/ws", "/home/a") is None


@pytest.mark.parametrize(("entry", "said"), [
    ({"type": "prompt", "command": "x"}, 'type: expected "command", got \'prompt\''),
    ({"command": " "}, "command: required (or linux, or bash)"),
    ({}, "command: required (or linux, or bash)"),
    ({"command": "x", "timeout": 0}, "timeout: expected a number of seconds > 0"),
    ({"command": "x", "timeout": 90000}, "timeout: 90000 seconds: at most 86400"),
    ({"command": "x", "env": {"A": 1}}, "env.A: expected text, got 1"),
    ({"command": "x", "env": {"A B": "1"}}, "env: 'A B': not a variable's name"),
    ({"command": "x", "env": {"A": "a\0b"}}, "env.A: expected text"),
    ({"command": "x", "cwd": ["a"]}, "cwd: expected text"),
    ("just a string", "expected a mapping of fields"),
])
def test_a_command_initd_cannot_load_stands_in_on_its_event(tmp_path: Path, entry: Any,
                                                           said: str) -> None:
    found = load(tmp_path, {"hooks": {"PreToolUse": [entry, {"command": "still"}]}})
    [error] = errors(found)
    assert said in error and "hooks.PreToolUse[0]" in error, error
    assert [h.label for h in found.hooks] == ["still"]
    assert [s.event for s in found.unread] == ["pre_tool"]


def test_an_unknown_event_an_unfired_one_and_another_platforms_command(tmp_path: Path
                                                                       ) -> None:
    found = load(tmp_path, {"hooks": {"PreToolUsee": [{"command": "x"}],
                                      "SessionEnd": [{"command": "x"}],
                                      "Stop": [{"windows": "x.ps1"}, "not a list"]}})
    assert "unknown VS Code hook event 'PreToolUsee'" in errors(found)[0]
    warnings = [p.text for p in found.problems if p.severity == "warning"]
    assert any("never fires this event" in w for w in warnings)
    assert any("no command for Linux" in w for w in warnings)
    assert found.unread[-1].event == "stop"  # "not a list" is a broken guard of Stop
    assert not any(s.event is None for s in found.unread)


@pytest.mark.parametrize("text", ['{"hooks": [1]}', "[]", "{", '{"hooks": {"Stop": {}}}'])
def test_a_file_that_is_no_hook_file_is_an_error(tmp_path: Path, text: str) -> None:
    found = load(tmp_path, text)
    assert errors(found) and found.unread and found.hooks == []


def test_the_users_settings_turn_hooks_off_the_workspaces_cannot(tmp_path: Path) -> None:
    put(tmp_path / "ws" / ".vscode" / "settings.json", '{"chat.useHooks": false, // no\n}')
    found = load(tmp_path, {"hooks": {"Stop": [{"command": "x"}]}})
    assert [h.label for h in found.hooks] == ["x"]
    assert any("a workspace's settings turn no hook off" in p.text for p in found.problems)
    put(tmp_path / "home" / ".config" / "Code" / "User" / "settings.json",
        '{"chat.useHooks": false}')
    assert vscode.load(str(tmp_path / "ws"), str(tmp_path / "home")).hooks == []


def test_the_files_it_reads(tmp_path: Path) -> None:
    load(tmp_path, {"hooks": {}})
    where = vscode.Where(str(tmp_path / "ws"), "/nonexistent", str(tmp_path / "home"))
    files = vscode.DIALECT.files(where)
    assert str(tmp_path / "ws" / ".github" / "hooks" / "guard.json") in files
    assert "/etc/vscode/policy.json" in files
