"""Invariant 12 (guards fail closed) in the events engine: a hook initd could not load
stands in as that hook's error on the events it may be on (standins.py); an answer that
looks like JSON is read whole, or is the hook's error (answers.py); a payload's value too
big for an environment is left out of it, and what exec would still refuse is the hook's
error (variables.py, execsize.py). Tables for the pure parts, the engine for the rest."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from initd.config.problems import Problem
from initd.events import answers, execsize, variables
from initd.events.actions import ActionResult, Status
from initd.events.dialects import claude
from initd.events.dialects.discobot import standing
from initd.events.model import BLOCKABLE, EVERY, StandIn
from initd.hooks import discovery
from initd.hooks.discovery import Broken
from tests.events.support import Workspace

RM = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}
DENY = 'grep -q "rm -rf" && { echo "refusing rm -rf" >&2; exit 2; }; exit 0'


@pytest.mark.parametrize(("on", "event", "blockable", "concerns"), [
    ("pre_tool", "pre_tool", True, True),
    ("pre_tool", "stop", True, False),  # the event it names, only
    ("post_tool", "post_tool", False, True),  # an error there, blocking nothing
    (BLOCKABLE, "stop", True, True),  # not known which: every blockable one
    (BLOCKABLE, "after_turn", False, False),
    (EVERY, "after_turn", False, True),  # a hooks directory not read whole
])
def test_which_events_a_stand_in_is_on(on: str, event: str, blockable: bool,
                                       concerns: bool) -> None:
    assert StandIn("/f", "why", on).concerns(event, blockable) is concerns


WS_FILE, IMAGE_FILE = "/ws/.discobot/hooks/10-x.sh", "/etc/initd/hooks.d/10-x.sh"


@pytest.mark.parametrize(("broken", "on"), [
    (Broken(Problem(WS_FILE, None, "", "error"), "pre_tool"), "pre_tool"),
    (Broken(Problem(WS_FILE, None, "", "error"), "PreToolUse"), "pre_tool"),  # an alias
    (Broken(Problem(WS_FILE, None, "", "error"), "session"), None),  # plainly no event hook
    (Broken(Problem(WS_FILE, None, "", "error"), "pre-commit"), None),
    (Broken(Problem(WS_FILE, None, "", "error"), "pre_tol"), None),  # no event: check says so
    (Broken(Problem(WS_FILE, None, "", "error")), BLOCKABLE),  # no type, or did not parse
    (Broken(Problem(WS_FILE, None, "", "error"), ["pre_tool"]), BLOCKABLE),
    (Broken(Problem(WS_FILE, None, "", "error"), read=False), BLOCKABLE),
    (Broken(Problem(IMAGE_FILE, None, "", "error"), read=False), None),  # root's own, unreadable
    (Broken(Problem(IMAGE_FILE, None, "", "error")), BLOCKABLE),
])
def test_what_a_broken_hook_file_stands_in_on(broken: Broken, on: str | None) -> None:
    assert standing(broken, "/etc/initd/hooks.d") == on


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


def result(out: str, code: int = 0, **more: Any) -> ActionResult:
    return ActionResult(Status.OK if code == 0 else Status.FAILED, code, out, **more)


@pytest.mark.parametrize(("head", "tail", "whole", "fields"), [
    (b"short", b"", True, {"stdout": "short"}),
    (b"a" * 30_000, b"b" * 30_000, True, {"stdout": "a" * 30_000 + "b" * 30_000}),
    (b"{" + b" " * 200_000, b"}", True, {"stdout": "{" + " " * 32767 + answers.ELIDED
                                         + " " * 32767 + "}", "answer": "{" + " " * 200_000
                                         + "}", "cut": False}),
    (b"x" * 200_000, b"", True, {"stdout": "x" * 32768 + answers.ELIDED + "x" * 32768,
                                 "answer": None, "cut": False}),  # plain: shown only
    (b"{" * 10, b"}", False, {"stdout": "{" * 10 + answers.ELIDED + "{" * 10 + "}",
                              "answer": None, "cut": True}),
])
def test_what_a_result_keeps_of_stdout(head: bytes, tail: bytes, whole: bool,
                                       fields: dict[str, Any]) -> None:
    assert answers.kept(head, tail, whole) == fields


@pytest.mark.parametrize(("given", "read"), [
    (result("plain text"), None),
    (result('  {"decision": "block"}\n'), {"decision": "block"}),
    (result("{…", answer='{"reason": "' + "x" * 100_000 + '"}'), {"reason": "x" * 100_000}),
    (result("{oops"), "not JSON: Expecting property name"),
    (result("{" + "[" * 5000 + "]" * 5000 + "}"), "not JSON"),  # (a key is missing)
    (result('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"), "nested too deep"),
    (result('{"decision": "block", …', cut=True), "over 1 MiB"),
])
def test_reading_an_answer(given: ActionResult, read: dict[str, Any] | str | None) -> None:
    if isinstance(read, str):
        with pytest.raises(answers.Unreadable, match=read):
            answers.read(given)
    else:
        assert answers.read(given) == read


BIG = "x" * (execsize.STRING_LIMIT + 1)


@pytest.mark.parametrize(("table", "env", "left"), [
    ({"A": "1"}, {"A": "1"}, None),
    ({"A": "1", "NUL": "a\0b"}, {"A": "1"}, "NUL"),
    ({"CONTENT": BIG, "A": "1"}, {"A": "1"}, "CONTENT"),
    ({"PATH": BIG}, {"PATH": "/bin"}, None),  # initd's own wins: nothing to leave out
    ({f"V{n}": "x" * (90_000 + n * 1000) for n in range(7)},  # 651 KB: over 512 KiB
     {f"V{n}": "x" * (90_000 + n * 1000) for n in range(5)}, "V5 V6"),  # the biggest go
])
def test_a_value_too_big_for_an_environment_is_left_out(
        table: dict[str, str], env: dict[str, str], left: str | None) -> None:
    made = variables.environment({"PATH": "/bin"}, table)
    assert made.pop(variables.LEFT_OUT, None) == left
    assert made == {"PATH": "/bin", **env}


@pytest.mark.parametrize(("argv", "env", "why"), [
    (["sh", "-c", "true"], {"A": "1"}, None),
    (["sh", "-c", "x" * 131_072], {}, "its argument 2 is over 128 KiB"),
    (["sh"], {"INITD_V_1": "x" * 131_061}, None),  # "INITD_V_1=" and its NUL: 131,072
    (["sh"], {"INITD_V_1": "x" * 131_062}, "its variable INITD_V_1 is over 128 KiB"),
    (["sh"], {f"V{n}": "x" * 100_000 for n in range(100)}, "more than exec takes"),
])
def test_what_exec_would_refuse(argv: list[str], env: dict[str, str], why: str | None
                                ) -> None:
    said = execsize.too_big(argv, env)
    assert said is None if why is None else why in (said or ""), said


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
