"""Claude Code's wire (initd/events/wires/claude.py): initd's every answer to Claude Code,
whatever the hooks said, is read by Claude Code without a problem (the conformance
suite's reading of its reference, and the Agent SDK's SyncHookJSONOutput, vendored:
tests/conformance/contracts/claude); a guard's block is read as a block."""

from __future__ import annotations

import itertools
import subprocess
from typing import Any

import pytest

from initd.events.claude.names import EVENTS
from initd.events.wires.claude import WIRE
from tests.conformance.claude_current_support import read_answer

SAID: list[dict[str, Any]] = [
    {}, {"blocked": True, "reason": "no"}, {"blocked": True, "reason": ""},
    {"continue": False, "stopReason": "halt"}, {"aborted": True},
    {"additionalContext": "ctx"}, {"systemMessage": "note"}, {"feedback": "look"},
    {"permissionDecision": "allow", "updatedInput": {"command": "ls"}},
    {"permissionDecision": "ask", "reason": "sure?"}, {"updatedOutput": {"x": 1}},
    {"hookSpecific": {"claude": [{"sessionTitle": "t"}, {"worktreePath": "/w/t"}]}},
]
SAID.append({k: v for said in SAID for k, v in said.items()})


def sent(name: str, **more: Any) -> dict[str, Any]:
    return {"hook_event_name": name, "session_id": "s", "cwd": "/w", "tool_name": "Bash",
            "tool_input": {"command": "x"}, **more}


def read(name: str, said: dict[str, Any], **more: Any) -> Any:
    reply = WIRE.reply(WIRE.inbound(sent(name, **more), None), {"results": [], **said})
    return read_answer(name, subprocess.CompletedProcess([], reply.code, reply.stdout,
                                                         reply.stderr))


@pytest.mark.parametrize(("name", "said"), list(itertools.product(EVENTS, SAID)))
def test_every_answer_is_read_without_a_problem(name: str, said: dict[str, Any]) -> None:
    answer = read(name, said)
    assert answer.problems == [], answer.describe()


@pytest.mark.parametrize("name", ["PreToolUse", "Stop", "SubagentStop", "UserPromptSubmit",
                                  "TaskCreated", "TaskCompleted", "TeammateIdle",
                                  "PermissionRequest", "ConfigChange", "PreCompact"])
def test_a_block_is_read_as_one(name: str) -> None:
    answer = read(name, {"blocked": True, "reason": "no rm"}, source="user_settings")
    assert answer.blocked or answer.permission == "deny" or (
        answer.request or {}).get("behavior") == "deny", answer.describe()


def test_a_policy_config_change_cannot_be_blocked() -> None:
    answer = read("ConfigChange", {"blocked": True, "reason": "no"}, source="policy_settings")
    assert not answer.blocked


def test_a_worktree_path_and_none() -> None:
    ok = read("WorktreeCreate", {"hookSpecific": {"claude": [{"worktreePath": "/w/t"}]}})
    assert ok.worktree_path == "/w/t" and not ok.blocked
    assert read("WorktreeCreate", {}).blocked


def test_the_env_file_passes_only_on_its_events() -> None:
    assert WIRE.passes("session_start") == ("CLAUDE_ENV_FILE",)
    assert WIRE.passes("pre_tool") == ()


def test_an_unknown_event_name_is_an_error() -> None:
    from initd.errors import InitdError

    with pytest.raises(InitdError):
        WIRE.inbound({"hook_event_name": "PreToolUsee"}, None)
