"""nyzhi's ``[[agent.hooks]]`` as initd loads them (initd/events/dialects/nyzhi.py): the docs'
examples (tests/events/fixtures/, verbatim), the user's, project's and local files in
that order, and errors that name the file and the key and stop no other hook."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from initd.events.dialects import nyzhi
from tests.events.support import FIXTURES, errors, home, loader_workspace, put


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return loader_workspace(tmp_path)


def test_nyzhi_docs_examples(ws: Path) -> None:
    shutil.copy(FIXTURES / "nyzhi.toml", put(ws / ".nyzhi" / "x", "").parent / "config.toml")
    found = nyzhi.load(str(ws), home(ws))
    assert errors(found) == []
    rows = [(h.event, h.spec._asdict()["command"], h.pattern, h.timeout, h.block, h.tool_name)
            for h in found.hooks]
    assert rows[:4] == [
        ("after_edit", "cargo fmt -- {file}", ("*.rs",), 30.0, False, ()),
        ("after_turn", "cargo clippy --all -- -D warnings", (), 60.0, False, ()),
        ("after_edit", "prettier --write {file}", ("*.ts", "*.tsx"), 30.0, False, ()),
        ("pre_tool", "cargo test", (), 120.0, True, ("git_commit",))]
    assert len(rows) == 7


def test_nyzhi_files_load_user_then_project_then_local_and_aliases(ws: Path) -> None:
    put(Path(home(ws)) / ".config" / "nyzhi" / "config.toml",
        '[[agent.hooks]]\nevent = "post_tool"\ncommand = "echo user"\n')
    put(ws / ".nyzhi" / "config.toml",
        '[[agent.hooks]]\nevent = "pre_tool_use"\ncommand = "echo project"\n'
        '[[agent.hooks]]\nevent = "post_tool_failure"\ncommand = "echo failure"\n')
    put(ws / ".nyzhi" / "config.local.toml",
        '[agent]\nmodel = "x"\n[[agent.hooks]]\nevent = "teammate_idle"\ncommand = "echo local"\n')
    found = nyzhi.load(str(ws), home(ws))
    assert [(h.event, h.spec._asdict()["command"], h.workspace) for h in found.hooks] == [
        ("post_tool", "echo user", False), ("pre_tool", "echo project", True),
        ("post_tool_failure", "echo failure", True), ("teammate_idle", "echo local", True)]


def test_nyzhi_errors_do_not_stop_the_other_hooks(ws: Path) -> None:
    path = put(ws / ".nyzhi" / "config.toml", """
[[agent.hooks]]
event = "pre_tol"
command = "x"

[[agent.hooks]]
event = "after_turn"
command = "ok"

[[agent.hooks]]
event = "after_turn"
command = "x"
block = true

[[agent.hooks]]
event = "pre_tool"
type = "prompt"
command = "x"

[[agent.hooks]]
event = "pre_tool"
command = "x"
tool_name = 3
""")
    found = nyzhi.load(str(ws), home(ws))
    assert [h.spec._asdict()["command"] for h in found.hooks] == ["ok"]
    assert [e.split(": ", 2)[1:] for e in errors(found)] == [
        ["agent.hooks[0].event", f"unknown event 'pre_tol' (known: {_known()}, or an "
                                 "alias of one)"],
        ["agent.hooks[2].block", "after_turn cannot be blocked (only pre_tool, "
                                 "teammate_idle, task_completed and the Pre*/Stop events can)"],
        ["agent.hooks[3].type", "only 'command' hooks run (nyzhi reserves 'prompt'), got "
                                "'prompt'"],
        ["agent.hooks[4].tool_name", "expected text (comma-separated) or a list of texts, "
                                     "got 3"]]
    assert all(e.startswith(str(path)) for e in errors(found))


def _known() -> str:
    from initd.hooks import kinds as model

    return model.known()


def test_nyzhi_bad_toml(ws: Path) -> None:
    put(ws / ".nyzhi" / "config.toml", "[[agent.hooks]\nevent =\n")
    [error] = errors(nyzhi.load(str(ws), home(ws)))
    assert "config.toml: not valid TOML" in error
