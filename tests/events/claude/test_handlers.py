"""A Claude Code command or http hook's own fields (initd/events/claude/handlers.py): the
spec initd runs, or a LoadError naming the file and the key."""

from __future__ import annotations

import pytest

from initd.config.problems import LoadError
from initd.events.claude import handlers
from initd.events.loading import EventFields
from initd.events.model import Command, Exec, HttpHook

FILE = "/ws/.claude/settings.json"
KEY = "hooks.PreToolUse[0].hooks[0]"


def fields(**data: object) -> EventFields:
    return EventFields(data, FILE, KEY)


def refused(make: object) -> str:
    with pytest.raises(LoadError) as raised:
        make()  # type: ignore[operator]
    assert raised.value.problem.path == FILE
    return str(raised.value).removeprefix(f"{FILE}: ")


def test_shell_form_runs_by_its_shell() -> None:
    assert handlers.command(fields(command="rm -rf x"), "/ws", "bash") == \
        Command("rm -rf x", "bash")
    assert handlers.command(fields(command="x", shell="sh"), "/ws", "bash") == \
        Command("x", "sh")
    assert refused(lambda: handlers.command(fields(command="x", shell="powershell"),
                                            "/ws", "bash")) == \
        f"{KEY}.shell: expected one of bash, sh, got 'powershell'"


def test_exec_form_with_the_project_dir_filled_in() -> None:
    made = handlers.command(fields(command="$CLAUDE_PROJECT_DIR/bin/lint",
                                   args=["${CLAUDE_PROJECT_DIR}/src", "$HOME"]), "/ws", "sh")
    assert made == Exec("/ws/bin/lint", ("/ws/src", "$HOME"))  # no shell: $HOME as is


@pytest.mark.parametrize(("data", "said"), [
    ({}, f"{KEY}.command: required"),
    ({"command": "  "}, f"{KEY}.command: expected text, got '  '"),
    ({"command": "x", "args": "a b"}, f"{KEY}.args: expected a list of strings"),
    ({"command": "x", "args": ["a", 1]}, f"{KEY}.args: expected a list of strings"),
])
def test_a_wrong_command_names_its_key(data: dict[str, object], said: str) -> None:
    assert refused(lambda: handlers.command(fields(**data), "/ws", "sh")).startswith(said)


def test_an_http_hook() -> None:
    made = handlers.http(fields(url="https://h/x", headers={"Authorization": "Bearer $T"},
                                allowedEnvVars=["T"]))
    assert made == HttpHook("https://h/x", {"Authorization": "Bearer $T"}, ("T",))
    assert handlers.http(fields(url="http://h")) == HttpHook("http://h", {}, ())


@pytest.mark.parametrize(("data", "said"), [
    ({"url": "ftp://h"}, f"{KEY}.url: expected an http:// or https:// URL, got 'ftp://h'"),
    ({"url": "file:///etc/shadow"}, f"{KEY}.url: expected an http:// or https:// URL"),
    ({"url": "http://h", "headers": ["a"]}, f"{KEY}.headers: expected a mapping"),
    ({"url": "http://h", "headers": {"X": 1}}, f"{KEY}.headers: expected a mapping"),
    ({"url": "http://h", "headers": {"X": "a\r\nHost: evil"}},
     f"{KEY}.headers: a header name or value may not hold a line break"),
    ({"url": "http://h", "headers": {"X\n": "a"}}, f"{KEY}.headers: a header name"),
    ({"url": "http://h", "allowedEnvVars": "T"}, f"{KEY}.allowedEnvVars: expected a list"),
])
def test_a_wrong_http_hook_names_its_key(data: dict[str, object], said: str) -> None:
    assert refused(lambda: handlers.http(fields(**data))).startswith(said)
