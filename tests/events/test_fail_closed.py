"""Invariant 12 (guards fail closed) in the events engine: a hook initd could not load
stands in as that hook's error on the events it may be on (standins.py); an answer that
looks like JSON is read whole, or is the hook's error (answers.py); a payload's value too
big for an environment is left out of it, and what exec would still refuse is the hook's
error (variables.py, execsize.py). Each module's tables are in its own test module
(test_model.py, test_answers.py, test_variables.py, test_execsize.py,
dialects/test_discobot.py); here, the engine end to end."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from initd.events import answers
from initd.events.dialects import claude
from initd.events.model import BLOCKABLE
from initd.hooks import discovery
from tests.events.support import Workspace

RM = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}
DENY = 'grep -q "rm -rf" && { echo "refusing rm -rf" >&2; exit 2; }; exit 0'


def test_discovery_says_what_each_broken_file_meant_to_be(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    files = {"10-alias.sh": "# type: pre_tool\n# name: &n guard\n# description: *n\n",
             "20-stop.sh": "# type: stop\n", "30-session.sh": "# type: session\n"
             "# run_as: admin\n"}
    for name, front in files.items():
        (hooks / name).write_text(f"#!/bin/sh\n#---\n{front}#---\nexit 2\n")
        (hooks / name).chmod(0o644 if name == "20-stop.sh" else 0o755)
    (hooks / "40-gone.sh").symlink_to(tmp_path / "missing")
    (hooks / "README").write_text("not a hook\n")
    found = discovery.discover([str(hooks)])
    assert [(Path(b.problem.path).name, b.type, b.read) for b in found.broken] == [
        ("10-alias.sh", None, True), ("20-stop.sh", "stop", True),
        ("30-session.sh", "session", True), ("40-gone.sh", None, False)]
    assert [b.problem for b in found.broken] == list(found.errors)  # check: as before
    assert len(found.problems) == 5  # (and the README's note)


def test_claude_load_errors_stand_in_on_their_event(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".claude").mkdir(parents=True)
    (ws / ".claude").mkdir(parents=True)
    command = {"type": "command", "command": "exit 2"}
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "^(?!Read$).*", "hooks": [command]}],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}]}],
        "PostToolUse": [{"hooks": [{**command, "shell": "zsh"}]}],
        "PermissionRequestt": [{"hooks": [command]}]}}))  # no such event
    (home / ".claude" / "settings.json").write_text('{"hooks": {"Stop": [}')
    found = claude.load(str(ws), str(home), str(tmp_path / "managed.json"))
    assert [(s.event, s.dialect) for s in found.unread] == [
        (BLOCKABLE, "claude"), ("pre_tool", "claude"), ("stop", "claude"),
        ("post_tool", "claude")]
    assert "hooks.PreToolUse[0].matcher: '^(?!Read$).*'" in found.unread[1].reason
    assert len(found.problems) == 5  # initd hooks check: every one, as before


# --- the engine


def claude_guard(ws: Workspace, matcher: str, command: str = DENY) -> None:
    ws.home = str(ws.root / "home")  # (never the real one)
    os.makedirs(ws.home, exist_ok=True)
    ws.write(".claude/settings.json", json.dumps({"hooks": {"PreToolUse": [
        {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}}))


def test_a_claude_guard_initd_cannot_load_blocks_its_event_only(
        ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    claude_guard(ws, "^(?!Read$).*")
    for _ in range(2):
        out = ws.fire("PreToolUse", RM)
        assert out["blocked"] and out["permissionDecision"] == "deny"
        [stand_in] = out["results"]
        assert (stand_in["status"], stand_in["dialect"], stand_in["command"]) == (
            "blocked", "claude", "a hook initd could not load")
        assert "RE2" in stand_in["error"] and "hooks.PreToolUse[0].matcher" in out["reason"]
    assert ws.fire("Stop", {})["results"] == []  # PreToolUse's: no other event's
    assert ws.fire("PostToolUse", RM)["results"] == []
    assert capsys.readouterr().err.count("hook not loaded") == 1  # said once


def test_a_front_matter_that_did_not_parse_blocks_every_blockable_event(
        ws: Workspace) -> None:
    """An alias in the front matter: initd refuses it (an alias bomb), so which event it
    was for is not known."""
    path = ws.write(".discobot/hooks/10-guard.sh", "#!/bin/sh\n#---\n# type: pre_tool\n"
                    "# name: &n guard\n# description: *n\n#---\n" + DENY + "\n")
    path.chmod(0o755)
    ws.script("20-session.sh", "session", "exit 0")
    ws.write(".discobot/hooks/30-broken-session.sh", "#!/bin/sh\n#---\n# type: session\n"
             "# run_as: admin\n#---\n").chmod(0o755)
    for event in ("pre_tool", "stop", "user_prompt_submit"):
        out = ws.fire(event, RM)
        assert out["blocked"], event
        [stand_in] = out["results"]
        assert "aliases" in stand_in["error"] and "10-guard.sh" in stand_in["error"]
    assert ws.fire("after_turn", {})["results"] == []  # not blockable: nothing said
    assert ws.fire("post_tool", RM)["results"] == []


@pytest.mark.parametrize(("target", "said"), [
    ("../../../moved-away", "outside the workspace"),  # (issue 36: a link that leaves it)
    ("moved-away.sh", "which does not exist"),
    ("10-guard.sh", "a link itself"),  # a loop
])
def test_a_guard_that_cannot_be_read_blocks_every_blockable_event(
        ws: Workspace, target: str, said: str) -> None:
    (ws.path / ".discobot" / "hooks").mkdir(parents=True)
    (ws.path / ".discobot" / "hooks" / "10-guard.sh").symlink_to(target)
    out = ws.fire("pre_tool", RM)
    assert out["blocked"] and said in out["results"][0]["error"], out["results"]
    assert ws.fire("stop", {})["blocked"]


def test_a_broken_event_hook_of_a_known_event_is_an_error_there(ws: Workspace) -> None:
    path = ws.write(".discobot/hooks/10-log.sh", "#!/bin/sh\n#---\n# type: post_tool\n#---\n")
    path.chmod(0o644)  # not executable
    out = ws.fire("post_tool", RM)
    assert not out["blocked"] and out["results"][0]["status"] == "error"
    assert "not executable" in out["results"][0]["error"]
    assert ws.fire("pre_tool", RM)["results"] == []


PRINT = "python3 -c 'import json, sys; print({})'"


@pytest.mark.parametrize(("stdout", "blocked", "status"), [
    ('json.dumps({"decision": "block", "reason": "no rm" + " " * 100000})', True, "blocked"),
    ('"x" * 200000', False, "ok"),  # plain output: not an answer, only shown cut
    ('"{oops"', True, "blocked"),
    ('"{\\"decision\\": \\"block\\", \\"d\\": " + "[" * 5000 + "]" * 5000 + "}"', True,
     "blocked"),
    ('json.dumps({"decision": "block", "reason": "x" * 2**21})', True, "blocked"),
])
def test_a_long_or_unreadable_answer_never_lets_the_action_through(
        ws: Workspace, stdout: str, blocked: bool, status: str) -> None:
    ws.script("10-guard.sh", "pre_tool", "cat >/dev/null; " + PRINT.format(stdout))
    out = ws.fire("pre_tool", RM)
    [hook] = out["results"]
    assert (out["blocked"], hook["status"]) == (blocked, status), hook["error"]
    assert len(hook["stdout"]) <= 2 * 32768 + len(answers.ELIDED) + 1
    if hook["error"] is None and blocked:
        assert out["reason"].startswith("no rm")
    ws.script("10-guard.sh", "post_tool", "cat >/dev/null; " + PRINT.format(stdout))
    after = ws.fire("post_tool", RM)["results"][0]  # not blockable: an error, said
    assert after["status"] == ("error" if hook["error"] else "ok"), after


def test_a_claude_deny_with_a_long_reason_is_read_whole(ws: Workspace) -> None:
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                   "permissionDecision": "deny",
                                   "permissionDecisionReason": "no rm" + " " * 100_000}}
    ws.write("deny.json", json.dumps(deny))
    claude_guard(ws, "Bash", 'cat >/dev/null; cat "$CLAUDE_PROJECT_DIR/deny.json"')
    out = ws.fire("PreToolUse", RM)
    assert out["blocked"] and out["permissionDecision"] == "deny"
    assert out["reason"].startswith("no rm") and out["results"][0]["error"] is None


def test_a_value_too_big_for_the_environment_is_on_stdin_only(ws: Workspace) -> None:
    ws.script("10-see.sh", "pre_tool", 'wc -c > "$WORKSPACE/stdin"; '
              'echo "${INITD_LEFT_OUT-none} ${TOOL_INPUT-unset} $TOOL_NAME" > "$WORKSPACE/env"')
    write = {"tool_name": "Write", "tool_input": {"content": "x" * 200_000}}
    out = ws.fire("pre_tool", write)
    assert out["results"][0]["status"] == "ok", out["results"][0]
    assert (ws.path / "env").read_text() == "TOOL_INPUT unset Write\n"
    assert int((ws.path / "stdin").read_text()) > 200_000


def test_a_placeholder_exec_cannot_take_is_the_hooks_error(ws: Workspace) -> None:
    """A command's ``{{content}}`` is a variable of its own (templates.py): over what exec
    takes, the hook cannot start, and a blockable event is blocked (on_error: allow)."""
    ws.write(".iteratr.hooks.yml", json.dumps({"version": 1, "hooks": {
        "pre_tool": [{"command": "printf %s {{content}} | wc -c"}],
        "after_turn": [{"command": "printf %s {{content}} | wc -c"}]}}))
    out = ws.fire("pre_tool", {"content": "x" * 200_000})
    assert out["blocked"] and "E2BIG" in out["reason"], out
    after = ws.fire("after_turn", {"content": "x" * 200_000})["results"][0]
    assert after["status"] == "error" and "E2BIG" in after["error"]
    assert ws.fire("pre_tool", {"content": "x" * 100})["results"][0]["stdout"].strip() == "100"
