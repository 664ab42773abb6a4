"""iteratr's hooks file as initd loads it (initd/events/dialects/iteratr.py): the spec's
example (tests/events/fixtures/, verbatim), the shorthand, and every way the file or a hook
in it can be wrong: the error names the file and the key, and the other hooks still load."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from initd.events.dialects import iteratr
from tests.events.support import FIXTURES, errors, loader_workspace, put


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return loader_workspace(tmp_path)


def test_iteratr_spec_example(ws: Path) -> None:
    shutil.copy(FIXTURES / "iteratr.hooks.yml", ws / ".iteratr.hooks.yml")
    found = iteratr.load(str(ws))
    assert errors(found) == []
    assert [(h.event, h.spec._asdict()["command"], h.timeout, h.action, h.wait)
            for h in found.hooks] == [
        ("pre_iteration", "git status --short", 5.0, "shell", True),
        ("pre_iteration", "./scripts/context.sh {{iteration}}", 60.0, "shell", True)]
    assert found.hooks[1].key == "hooks.pre_iteration[1]"


def test_iteratr_shorthand_and_default_timeout(ws: Path) -> None:
    shutil.copy(FIXTURES / "iteratr-shorthand.hooks.yml", ws / ".iteratr.hooks.yml")
    [hook] = iteratr.load(str(ws)).hooks
    assert (hook.spec._asdict()["command"], hook.timeout) == ("./scripts/context.sh", 30.0)


def test_iteratr_later_events_and_errors(ws: Path) -> None:
    put(ws / ".iteratr.hooks.yml", """
hooks:
  session_start: [{command: "echo start"}]
  on_error: [{command: "echo {{error}}"}]
  pre_iteraton: [{command: "typo"}]
  post_iteration:
    - {timeout: 3}
    - command: "echo after"
      pipe_output: true
""")
    found = iteratr.load(str(ws))
    assert [(h.event, h.spec._asdict()["command"]) for h in found.hooks] == [
        ("session_start", "echo start"), ("error", "echo {{error}}"),
        ("post_iteration", "echo after")]
    path = ws / ".iteratr.hooks.yml"
    assert errors(found) == [
        f"{path}: hooks.pre_iteraton: unknown event 'pre_iteraton' (known: "
        + ", ".join(e.name for e in __import__("initd.hooks.kinds", fromlist=["EVENTS"])
                    .EVENTS) + ", or an alias of one)",
        f"{path}: hooks.post_iteration[0].command: required"]
    assert found.hooks[2].warnings == ("hooks.post_iteration[1]: unknown key 'pipe_output' "
                                       "ignored",)


@pytest.mark.parametrize(("text", "message"), [
    ("version: 2\nhooks: {}\n", "version: expected 1, got 2"),
    ("hooks: [1, 2]\n", "hooks: expected a mapping"),
    ("- a\n", "expected a mapping with version and hooks"),
    ("hooks:\n  pre_iteration: {command: [1]}\n", "hooks.pre_iteration[0].command: expected "
                                                    "text, got [1]"),
    ("hooks: {pre_iteration: [{command: x, timeout: -1}]}\n", "timeout: expected a number > 0"),
    ("hooks: {pre_iteration: [{command: x, timeout: yes}]}\n", "timeout: expected a number"),
    ("hooks:\n\tpre_iteration: []\n", "not valid YAML"),
])
def test_iteratr_broken_files_say_where(ws: Path, text: str, message: str) -> None:
    put(ws / ".iteratr.hooks.yml", text)
    [error] = errors(iteratr.load(str(ws)))
    assert error.startswith(str(ws / ".iteratr.hooks.yml")) and message in error
