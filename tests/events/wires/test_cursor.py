"""Cursor's wire (initd/events/wires/cursor.py): initd's every answer read by Cursor
without a problem (the conformance suite's reading, and py-cursor-hooks' output models,
vendored: tests/conformance/contracts/cursor), a guard's block read as one, an ask that
Cursor's event cannot ask a deny, and the answers gathered from every Cursor hook."""

from __future__ import annotations

import itertools
import subprocess
from typing import Any

import pytest

from initd.events.cursor.names import EVENTS, GUARDS
from initd.events.wires.cursor import WIRE
from tests.conformance.cursor_hooks_answers import read_answer
from tests.conformance.cursor_hooks_support import payload

SAID: list[dict[str, Any]] = [
    {}, {"blocked": True, "reason": "no"}, {"continue": False, "stopReason": "halt"},
    {"aborted": True}, {"additionalContext": "ctx"}, {"systemMessage": "note"},
    {"feedback": "look"}, {"permissionDecision": "allow", "updatedInput": {"command": "ls"}},
    {"permissionDecision": "ask", "reason": "sure?"}, {"updatedOutput": {"x": 1}},
    {"hookSpecific": {"cursor": [{"env": {"A": "1"}}, {"env": {"B": "2"}},
                                 {"pluginPaths": ["/p"]}]}},
]
SAID.append({k: v for said in SAID for k, v in said.items()})


def read(name: str, said: dict[str, Any]) -> Any:
    reply = WIRE.reply(WIRE.inbound(payload(name), None), {"results": [], **said})
    return read_answer(name, subprocess.CompletedProcess([], reply.code, reply.stdout,
                                                         reply.stderr))


@pytest.mark.parametrize(("name", "said"), list(itertools.product(EVENTS, SAID)))
def test_every_answer_is_read_without_a_problem(name: str, said: dict[str, Any]) -> None:
    answer = read(name, said)
    assert answer.problems == [], answer.describe()


@pytest.mark.parametrize("name", GUARDS)
def test_a_block_of_a_guard_is_read_as_one(name: str) -> None:
    assert read(name, {"blocked": True, "reason": "no"}).blocked


def test_an_ask_cursor_cannot_ask_is_a_deny() -> None:
    answer = read("subagentStart", {"permissionDecision": "ask", "reason": "sure?"})
    assert answer.blocked and "cannot ask" in str(answer.get("user_message"))
    assert read("beforeShellExecution", {"permissionDecision": "ask"}).permission == "ask"


def test_a_stop_follow_up_and_the_gathered_answers() -> None:
    assert read("stop", {"blocked": True, "reason": "go on"}).followup == "go on"
    started = read("sessionStart", {"hookSpecific": {"cursor": [
        {"env": {"A": "1"}}, {"env": {"A": "2", "B": "3"}}]}})
    assert started.get("env") == {"A": "2", "B": "3"}  # merged, the later one wins
    opened = read("workspaceOpen", {"hookSpecific": {"cursor": [
        {"pluginPaths": ["/a"]}, {"pluginPaths": ["/b"]}]}})
    assert opened.get("pluginPaths") == ["/a", "/b"]


def test_the_shim_is_fail_closed_on_every_guard() -> None:
    made = WIRE.shim("initd emit --from cursor")
    hooks = made.config["hooks"]
    assert set(hooks) == set(EVENTS)
    assert all(hooks[name][0].get("failClosed") is (True if name in GUARDS else None)
               for name in EVENTS)
