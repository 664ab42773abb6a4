"""Gemini CLI's format where initd decides what the conformance suite leaves open: which
file's hooksConfig decides which hooks (dialects/gemini.py), which files the system
variables may name (gemini/settings.py), a matcher that is no regular expression, the
answers the reference and Gemini's engine read differently (gemini/answers.py), and what
initd answers Gemini (wires/gemini.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from initd.events.actions import ActionResult, Status
from initd.events.claude.matchers import MatcherError
from initd.events.dialects import gemini
from initd.events.gemini import answers, settings
from initd.events.model import EventHook, Script
from initd.events.wire import Inbound, Origin
from initd.events.wires import gemini as gwire
from initd.hooks import kinds

NOBODY = 65534


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


@pytest.mark.skipif(os.geteuid() != 0, reason="cannot run here: files of another user "
                    "need root")
def test_only_a_file_root_alone_can_have_put_there_is_read(tmp_path: Path) -> None:
    base = tmp_path / "etc"
    base.mkdir()
    base.chmod(0o755)
    path = base / "settings.json"
    path.write_text("{}")
    assert settings.root_only(str(path)) is None
    assert settings.root_only(str(base / "missing" / "x.json")) is None  # (root's to make)
    os.chown(path, NOBODY, NOBODY)
    assert "is not root's" in str(settings.root_only(str(path)))
    os.chown(path, 0, 0)
    base.chmod(0o777)
    assert "can be written by others" in str(settings.root_only(str(path)))
    base.chmod(0o1777)  # sticky: its entries are their owners'
    assert settings.root_only(str(path)) is None
    base.chmod(0o755)
    theirs = tmp_path / "theirs.json"
    theirs.write_text("{}")
    os.chown(theirs, NOBODY, NOBODY)
    (base / "link.json").symlink_to(theirs)
    assert "is not root's" in str(settings.root_only(str(base / "link.json")))
    path.chmod(0o666)
    assert "can be written by others" in str(settings.root_only(str(path)))


def test_a_relative_variable_is_not_read(tmp_path: Path) -> None:
    found, problems = settings.files("/ws", "/home", {
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH": "etc/settings.json"})
    assert found[3] == ("/etc/gemini-cli/settings.json", "system")
    assert "not an absolute path" in problems[0].reason


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


HOOK = EventHook(event="pre_tool", dialect="gemini", source="s", key="k", label="guard",
                 spec=Script("x", "x"), timeout=1, wait=True)


@pytest.mark.parametrize("code, out, err, blocks", [
    (2, '{"decision": "allow"}', "no", True),  # exit 2 blocks (the reference), JSON or not
    (3, "", "denied by text", True),  # text on another exit: the engine's deny
    (1, "", "lint crashed", False),  # a warning
    (0, "", '{"decision": "deny", "reason": "on stderr"}', True),  # stdout empty: stderr's
    (0, "checking... {}", "", False),  # text: a message for the user
])
def test_what_an_answer_means(code: int, out: str, err: str, blocks: bool) -> None:
    result = ActionResult(Status.OK if code == 0 else Status.FAILED, code, out, err)
    said = answers.verdict(result, HOOK, kinds.BY_NAME["pre_tool"])
    assert said.blocks is blocks, said


def test_an_advisory_events_decision_and_continue_are_not_read() -> None:
    result = ActionResult(Status.OK, 0, json.dumps({"continue": False, "decision": "deny",
                                                    "systemMessage": "hi"}))
    said = answers.verdict(result, HOOK._replace(event="session_start"),
                           kinds.BY_NAME["session_start"])
    assert not said.blocks and said.continue_ is None and said.system_message == "hi"


def test_after_tools_deny_replaces_the_result() -> None:
    result = ActionResult(Status.OK, 0, json.dumps({"decision": "deny", "reason": "[gone]"}))
    said = answers.verdict(result, HOOK._replace(event="post_tool"),
                           kinds.BY_NAME["post_tool"])
    assert not said.blocks and said.updated_output == "[gone]"


def came(name: str, **payload: Any) -> Inbound:
    return Inbound(gwire.EVENTS[name], payload, Origin("gemini", name, payload))


def test_tool_selection_answers_merge_as_gemini_merges_them() -> None:
    own: list[dict[str, Any]] = [
        {"toolConfig": {"mode": "ANY", "allowedFunctionNames": ["b", "a"]}},
           {"toolConfig": {"mode": "AUTO", "allowedFunctionNames": ["c"]}}]
    reply = gwire.WIRE.reply(came("BeforeToolSelection"), {"hookSpecific": {"gemini": own}})
    assert json.loads(reply.stdout)["hookSpecificOutput"]["toolConfig"] == {
        "mode": "ANY", "allowedFunctionNames": ["a", "b", "c"]}
    own.append({"toolConfig": {"mode": "NONE"}, "clearContext": True})
    reply = gwire.WIRE.reply(came("BeforeToolSelection"), {"hookSpecific": {"gemini": own}})
    assert json.loads(reply.stdout)["hookSpecificOutput"] == {
        "hookEventName": "BeforeToolSelection",
        "toolConfig": {"mode": "NONE", "allowedFunctionNames": []}}  # (no clearContext)


def test_a_rewritten_input_is_merged_over_the_models() -> None:
    reply = gwire.WIRE.reply(came("BeforeTool", tool_input={"command": "ls", "dir_path": "s"}),
                             {"updatedInput": {"command": "ls -la"}})
    assert json.loads(reply.stdout)["hookSpecificOutput"]["tool_input"] == {
        "command": "ls -la", "dir_path": "s"}


def test_notification_is_answered_with_its_two_fields_only() -> None:
    reply = gwire.WIRE.reply(came("Notification"), {
        "blocked": True, "reason": "no", "continue": False, "systemMessage": "seen",
        "additionalContext": "c"})
    assert json.loads(reply.stdout) == {"systemMessage": "seen\nno"}
