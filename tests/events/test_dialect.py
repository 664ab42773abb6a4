"""The one Dialect protocol (initd/events/dialect.py): initd's rules for the formats that
have none of their own, what their hooks read on stdin, and a call prepared as its hook's
dialect makes it."""

from __future__ import annotations

from typing import Any

from initd.events import dialect
from initd.events.actions import Call
from initd.events.dialects import DIALECTS
from tests.support.calls import call


def test_initds_rules() -> None:
    rules = dialect.InitdRules()
    assert (rules.together, rules.stdin_only, rules.wire) == (False, False, None)
    made = call(event="after_turn", payload={"files": ["a"], "event": "forged",
                                             "workspace": "/elsewhere"},
                variables={"SESSION": "s1", "TIMESTAMP": "t"}, workspace="/ws")
    assert rules.stdin(made) == {"files": ["a"], "event": "after_turn",
                                 "eventName": "after_turn", "sessionId": "s1",
                                 "workspace": "/ws", "timestamp": "t"}  # initd's win


def test_own_name_is_the_events_name_as_its_file_writes_it() -> None:
    assert dialect.own_name(call(hook_fields={"key": "hooks.PreToolUse[0]"})) == "PreToolUse"
    assert dialect.own_name(call(hook_fields={"key": "agent.hooks[0]"}, event="stop")) == \
        "hooks"
    assert dialect.own_name(call(hook_fields={"key": ""}, event="stop")) == "stop"


def test_prepared_as_the_hooks_dialect_makes_it() -> None:
    made = call(event="pre_tool", payload={"tool_name": "Bash"},
                hook_fields={"dialect": "claude", "key": "hooks.PreToolUse[0]"})
    prepared = dialect.prepared(DIALECTS["claude"], made)
    assert prepared is not None and prepared.stdin["hook_event_name"] == "PreToolUse"

    class Refusing(dialect.InitdRules):
        def prepare(self, given: Call) -> Call | None:
            return None

    assert isinstance(Refusing(), dialect.Prepares)
    assert dialect.prepared(Refusing(), made) is None  # type: ignore[arg-type]


def test_every_dialect_is_one() -> None:
    for name, each in DIALECTS.items():
        where = dialect.Where("/nonexistent/ws", "/nonexistent/image", "/nonexistent/home")
        files: list[Any] = each.files(where)
        assert each.name == name and each.title and all(isinstance(f, str) for f in files)
