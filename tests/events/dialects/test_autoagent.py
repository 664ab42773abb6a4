"""AutoAgent's hooks as initd loads them (initd/events/dialects/autoagent.py): the design's
"Configuration Structure" (tests/events/fixtures/autoagent.json), the workspace's file over
the user's per event, errors naming the file and the key, and ``set_auto``'s built-in
git hooks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from initd.config.problems import LoadError
from initd.events.dialects import autoagent
from tests.events.support import FIXTURES, errors, home, loader_workspace, put


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return loader_workspace(tmp_path)


def test_autoagent_design_example(ws: Path) -> None:
    put(ws / ".autoagent" / "config.json", (FIXTURES / "autoagent.json").read_text())
    found = autoagent.load(str(ws), home(ws))
    assert errors(found) == []
    rows = [(h.event, h.action, h.label, h.block, h.timeout) for h in found.hooks]
    assert rows == [
        ("pre_execution_start", "shell", "echo 'About to start issue {{issueNumber}}: "
         "{{issueTitle}}' >> ~/.autoagent/execution.log", False, 60.0),
        ("post_execution_start", "shell", "bash .autoagent/hooks/track-execution-start.sh",
         False, 60.0),
        ("pre_execution_end", "shell", "bash .autoagent/hooks/validate-execution.sh", True,
         60.0),
        ("post_execution_end", "shell", "bash .autoagent/hooks/notify-completion.sh", False,
         60.0),
        ("post_execution_end", "git-commit",
         "git commit -m 'Complete issue #{{issueNumber}}: {{issueTitle}}'", False, 60.0)]


def test_autoagent_workspace_merges_over_the_user_per_event(ws: Path) -> None:
    put(Path(home(ws)) / ".autoagent" / "config.json", json.dumps({"hooks": {
        "Stop": [{"type": "command", "command": "user stop"}],
        "PostExecutionEnd": [{"type": "command", "command": "user end"}]}}))
    put(ws / ".autoagent" / "config.json", json.dumps({"hooks": {
        "PostExecutionEnd": [{"type": "git-push"}]}}))
    found = autoagent.load(str(ws), home(ws))
    assert [(h.event, h.label, h.workspace) for h in found.hooks] == [
        ("stop", "user stop", False), ("post_execution_end", "git push origin current", True)]


@pytest.mark.parametrize(("hooks", "message"), [
    ({"PreExecutionBegin": []}, "hooks.PreExecutionBegin: unknown event 'PreExecutionBegin'"),
    ({"Stop": {"type": "command"}}, "hooks.Stop: expected a list of hooks"),
    ({"Stop": [{"type": "command"}]}, "hooks.Stop[0].command: required"),
    ({"Stop": [{"type": "shell", "command": "x"}]}, "hooks.Stop[0].type: expected one of "
                                                    "command, git-commit, git-push"),
    ({"Stop": [{"command": "x", "timeout": "60s"}]}, "hooks.Stop[0].timeout: expected a "
                                                      "number > 0, got '60s'"),
    ({"Stop": [{"command": "x", "blocking": "yes"}]}, "hooks.Stop[0].blocking: expected true "
                                                       "or false"),
])
def test_autoagent_errors_name_file_and_key(ws: Path, hooks: object, message: str) -> None:
    path = put(ws / ".autoagent" / "config.json", json.dumps({"hooks": hooks}))
    [error] = errors(autoagent.load(str(ws), home(ws)))
    assert error.startswith(f"{path}: ") and message in error


def test_set_auto_commit_and_push_manage_the_built_in_hooks(ws: Path) -> None:
    path = put(ws / ".autoagent" / "config.json", json.dumps(
        {"providers": ["claude"], "hooks": {"PostExecutionEnd": [
            {"type": "command", "command": "notify"}]}}))
    assert "added the git-push hook" in autoagent.set_auto(str(ws), "git-push", True)
    assert "added the git-commit hook" in autoagent.set_auto(str(ws), "git-commit", True)
    assert "already in" in autoagent.set_auto(str(ws), "git-commit", True)
    data = json.loads(path.read_text())
    assert data["providers"] == ["claude"]  # the rest of the file is kept
    assert [e["type"] for e in data["hooks"]["PostExecutionEnd"]] == [
        "command", "git-commit", "git-push"]  # a push goes after the commit
    assert data["hooks"]["PostExecutionEnd"][1]["message"] == autoagent.COMMIT_MESSAGE
    assert "removed the git-commit hook" in autoagent.set_auto(str(ws), "git-commit", False)
    assert [e["type"] for e in json.loads(path.read_text())["hooks"]["PostExecutionEnd"]] == [
        "command", "git-push"]
    fresh = ws.parent / "fresh"
    fresh.mkdir()
    autoagent.set_auto(str(fresh), "git-commit", True)  # no config yet: one is made
    assert autoagent.load(str(fresh), home(ws)).hooks[0].action == "git-commit"
    put(fresh / ".autoagent" / "config.json", "{not json")
    with pytest.raises(LoadError, match="not valid JSON"):
        autoagent.set_auto(str(fresh), "git-push", True)
