"""``initd shim cursor``: the hooks.json that routes every event of Cursor's hooks
reference to ``initd emit --from cursor``, printed, or merged into the user's
``~/.cursor/hooks.json`` with ``--write``; checked against the reference's own tables
(HOOKS = https://cursor.com/docs/agent/hooks, revision of 2026-08-24), and run the way
Cursor runs it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import Session, session_fixture
from tests.conformance.cursor_hooks_answers import config_errors, read_answer
from tests.conformance.cursor_hooks_support import (
    EVENTS,
    GUARD_EVENTS,
    deny_if,
    entry,
    hook_env,
    hooks_json,
    payload,
    project,
    shim,
    user,
)

pytestmark = pytest.mark.timeout(120)

MARK = "emit --from cursor"


@pytest.fixture
def cs(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def printed(cs: Session) -> dict[str, Any]:
    proc = shim(cs)
    assert proc.returncode == 0, proc.stderr
    config: dict[str, Any] = json.loads(proc.stdout)
    return config


def initd_entries(config: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [d for d in config["hooks"].get(event, []) if MARK in d.get("command", "")]


def test_the_printed_config_is_a_hooks_json_of_the_reference(cs: Session) -> None:
    """HOOKS "Configuration file": ``{"version": 1, "hooks": {...}}``; "Global
    Configuration Options": version | number | 1; "Per-Script Configuration Options":
    command (required), type, timeout (seconds), loop_limit, failClosed, matcher."""
    assert config_errors(printed(cs), EVENTS) == []


def test_the_printed_config_names_every_event(cs: Session) -> None:
    """HOOKS "Hook categories": Agent hooks sessionStart/sessionEnd, preToolUse/
    postToolUse/postToolUseFailure, subagentStart/subagentStop, beforeShellExecution/
    afterShellExecution, beforeMCPExecution/afterMCPExecution, beforeReadFile/
    afterFileEdit, beforeSubmitPrompt, preCompact, stop, afterAgentResponse/
    afterAgentThought; Tab hooks beforeTabFileRead, afterTabFileEdit; App lifecycle
    hook workspaceOpen. Each is routed to initd, once, with no matcher (every call)."""
    config = printed(cs)
    assert sorted(config["hooks"]) == sorted(EVENTS)
    for event in EVENTS:
        mine = initd_entries(config, event)
        assert len(mine) == 1, (event, config["hooks"][event])
        assert "matcher" not in mine[0], mine[0]


@pytest.mark.parametrize("event", GUARD_EVENTS)
def test_a_guard_event_fails_closed(cs: Session, event: str) -> None:
    """HOOKS: "failClosed | boolean | false | When `true`, hook failures (crash, timeout,
    invalid JSON) block the action instead of allowing it through. Useful for
    security-critical hooks." Without it, an initd that cannot run at all (its
    interpreter gone, a crash) is "Hook failed, action proceeds": issue 37 says a guard
    never passes because initd could not run it."""
    (mine,) = initd_entries(printed(cs), event)
    assert mine.get("failClosed") is True, mine


def run_line(cs: Session, line: str, data: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """A hooks.json command as Cursor runs a user hook: a shell line, from ~/.cursor,
    Cursor's payload on stdin and its environment."""
    where = cs.home / ".cursor"
    where.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["bash", "-c", line], input=json.dumps(data),
                          capture_output=True, text=True, timeout=100, cwd=str(where),
                          env=hook_env(cs))


@pytest.mark.parametrize(("command", "blocked"), [("rm -rf /tmp/x", True), ("ls", False)])
def test_the_printed_line_is_the_round_trip(cs: Session, command: str, blocked: bool) -> None:
    """The shim's beforeShellExecution line, run as Cursor runs a command hook ("Hooks
    are spawned processes that communicate over stdio using JSON in both directions"),
    asks initd, whose project guard's deny is Cursor's deny."""
    project(cs, hooks_json(beforeShellExecution=entry(deny_if(cs, "g", "rm -rf", "no rm"))))
    cs.start()
    (mine,) = initd_entries(printed(cs), "beforeShellExecution")
    proc = run_line(cs, mine["command"], payload("beforeShellExecution", cs, command=command))
    answer = read_answer("beforeShellExecution", proc)
    assert answer.blocked is blocked, answer.describe()
    assert not answer.problems, answer.describe()


def test_write_merges_into_the_users_file(cs: Session) -> None:
    """``--write`` "merges it into the user's own config file ($HOME/...) without losing
    what is there" (issue 37's interface contract): the user's own hooks of
    ~/.cursor/hooks.json ("User (User-specific): `~/.cursor/hooks.json`", HOOKS) stay."""
    own = hooks_json(afterFileEdit=entry("./hooks/format.sh"),
                     beforeShellExecution=entry("./hooks/block-git.sh", timeout=5))
    path = user(cs, own)
    proc = shim(cs, "--write")
    assert proc.returncode == 0, proc.stderr
    config = json.loads(path.read_text())
    assert config_errors(config, EVENTS) == []
    assert {"command": "./hooks/format.sh"} in config["hooks"]["afterFileEdit"]
    assert {"command": "./hooks/block-git.sh", "timeout": 5} in \
        config["hooks"]["beforeShellExecution"]
    assert all(len(initd_entries(config, e)) == 1 for e in EVENTS), config


def test_write_twice_adds_nothing(cs: Session) -> None:
    """Writing the shim again leaves one initd line per event (no second copy that would
    run every event twice: "All matching hooks from every source run", HOOKS)."""
    path = cs.home / ".cursor" / "hooks.json"
    for _ in range(2):
        proc = shim(cs, "--write")
        assert proc.returncode == 0, proc.stderr
    config = json.loads(path.read_text())
    assert config["version"] == 1
    assert all(len(initd_entries(config, e)) == 1 for e in EVENTS), config
