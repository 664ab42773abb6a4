"""VS Code's wire (initd/events/wires/vscode.py): VS Code's tools in initd's names and
back, initd's every answer read by the Local harness without a problem (the conformance
suite's reading, and hook-output.schema.json, vendored: tests/conformance/contracts/
vscode), a guard's block read as one, and what a VS Code hook reads on stdin."""

from __future__ import annotations

import itertools
import subprocess
from typing import Any

import pytest

from initd.events.wire import Origin
from initd.events.wires.vscode import EVENTS, WIRE, stdin
from tests.conformance.vscode_hooks_answers import read_answer
from tests.conformance.vscode_hooks_support import payload
from tests.support.calls import call

SAID: list[dict[str, Any]] = [
    {}, {"blocked": True, "reason": "no"}, {"blocked": True, "reason": ""},
    {"continue": False, "stopReason": "halt"}, {"aborted": True},
    {"additionalContext": "ctx"}, {"systemMessage": "note"}, {"feedback": "look"},
    {"permissionDecision": "allow", "updatedInput": {"command": "ls"}},
    {"permissionDecision": "ask", "reason": "sure?"},
]
SAID.append({k: v for said in SAID for k, v in said.items()})


def read(name: str, said: dict[str, Any]) -> Any:
    sent = payload(name, tool_name="run_in_terminal", tool_input={"command": "x"})
    reply = WIRE.reply(WIRE.inbound(sent, None), {"results": [], **said})
    return reply, read_answer(name, subprocess.CompletedProcess([], reply.code,
                                                                reply.stdout, reply.stderr))


@pytest.mark.parametrize(("name", "said"), list(itertools.product(EVENTS, SAID)))
def test_every_answer_is_read_without_a_problem(name: str, said: dict[str, Any]) -> None:
    _, answer = read(name, said)
    assert answer.problems == []


@pytest.mark.parametrize(("name", "decision"), [
    ("PreToolUse", "deny"), ("PostToolUse", "block"), ("UserPromptSubmit", "block"),
    ("Stop", "block"), ("SubagentStop", "block")])
def test_a_block_is_read_as_one(name: str, decision: str) -> None:
    _, answer = read(name, {"blocked": True, "reason": "no rm"})
    assert answer.decision == decision and answer.reason == "no rm"


def test_compaction_cannot_be_blocked_and_says_so() -> None:
    reply, answer = read("PreCompact", {"blocked": True, "reason": "no"})
    assert reply.code == 1 and "cannot block compaction" in reply.stderr
    assert answer.kind == "warning"


def test_its_tools_in_initds_names_and_back() -> None:
    inbound = WIRE.inbound(payload("PreToolUse", tool_name="create_file",
                                   tool_input={"filePath": "/w/a", "content": "x"}), None)
    assert inbound.event == "pre_tool"
    assert inbound.payload["tool_name"] == "Write"
    assert inbound.payload["tool_input"]["file_path"] == "/w/a"
    reply = WIRE.reply(inbound, {"permissionDecision": "allow",
                                 "updatedInput": {"file_path": "/w/b", "content": "y"}})
    assert '"filePath": "/w/b"' in reply.stdout  # in the tool's own names


def test_what_a_vscode_hook_reads() -> None:
    sent = payload("PreToolUse", tool_name="run_in_terminal", tool_input={"command": "ls"})
    own = call(event="pre_tool", origin=Origin("vscode", "PreToolUse", sent))
    assert stdin(own) == sent  # what VS Code sent, exactly
    other = stdin(call(event="pre_tool", workspace="/ws", variables={"SESSION": "s"},
                       payload={"tool_name": "Bash", "tool_input": {"command": "ls"}}))
    assert (other["tool_name"], other["hook_event_name"], other["cwd"],
            other["session_id"]) == ("run_in_terminal", "PreToolUse", "/ws", "s")


def test_the_shim_runs_initd_on_every_event() -> None:
    made = WIRE.shim("initd emit --from vscode")
    assert made.path == ".copilot/hooks/initd.json"
    assert set(made.config["hooks"]) == set(EVENTS)
