"""Gemini CLI's hook files as initd loads them (initd/events/dialects/gemini.py), where
initd decides what the conformance suite leaves open: which file's hooksConfig decides
which hooks, and a matcher that is no regular expression."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from initd.events.claude.matchers import MatcherError
from initd.events.dialects import gemini


def files(tmp_path: Path, **levels: dict[str, Any]) -> tuple[Path, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    for level, data in levels.items():
        path = (ws if level == "project" else home) / ".gemini" / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))
    ws.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    return ws, home


def guard(name: str, **config: Any) -> dict[str, Any]:
    return {"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": f"exit 2 #{name}",
                                                  "name": name}]}]},
            **({"hooksConfig": config} if config else {})}


def loaded(ws: Path, home: Path, **env: str) -> set[str]:
    """The names of the hooks that run (the system files: none, unless ``env`` names
    one; as root, the host's /etc/gemini-cli is never read)."""
    env.setdefault("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(ws.parent / "no-etc" / "s.json"))
    found = gemini.load(str(ws), str(home), env)
    return {hook.spec.name for hook in found.hooks}  # type: ignore[union-attr]


@pytest.mark.parametrize("user, project, runs", [
    ({}, {"enabled": False}, {"user"}),  # the workspace turns off its own only
    ({"enabled": False}, {}, set()),  # the user's: its own and the project's
    ({"enabled": False}, {"enabled": True}, {"project"}),  # (Gemini: project > user)
    ({}, {"disabled": ["user"]}, {"user", "project"}),  # not the user's hook by name
    ({"disabled": ["project"]}, {}, {"user"}),
])
def test_a_file_the_agent_writes_decides_nothing_above_it(
        tmp_path: Path, user: dict[str, Any], project: dict[str, Any], runs: set[str]) -> None:
    ws, home = files(tmp_path, user=guard("user", **user), project=guard("project", **project))
    assert loaded(ws, home) == runs


def test_the_system_files_enabled_decides_for_every_level(tmp_path: Path) -> None:
    system = tmp_path / "etc" / "settings.json"
    system.parent.mkdir()
    system.write_text(json.dumps(guard("system", enabled=False)))
    ws, home = files(tmp_path, user=guard("user", enabled=True), project=guard("project"))
    assert loaded(ws, home, GEMINI_CLI_SYSTEM_SETTINGS_PATH=str(system)) == set()
    system.write_text(json.dumps(guard("system", enabled=True)))
    assert loaded(ws, home, GEMINI_CLI_SYSTEM_SETTINGS_PATH=str(system)) == {
        "system", "user", "project"}


@pytest.mark.parametrize("text, tool, matches", [
    ("shell", "run_shell_command", True), ("^shell", "run_shell_command", False),
    ("run_shell_command", "Bash", True),  # initd's name of it, as Gemini names it
    ("mcp_github_.*", "mcp__github__create_issue", True),
    ("[", "[", True), ("[", "run_shell_command", False),  # no regex: the name itself
])
def test_a_tool_matcher_is_searched_in_geminis_name(text: str, tool: str,
                                                    matches: bool) -> None:
    assert gemini.matcher("pre_tool", text).matches({"tool_name": tool}) is matches


def test_a_matcher_re2_cannot_run_is_an_error() -> None:
    with pytest.raises(MatcherError):
        gemini.matcher("pre_tool", "(?=run)run_shell_command")
