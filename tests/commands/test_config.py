"""``initd config set-auto-commit|set-auto-push`` (initd/commands/config.py): AutoAgent's
built-in git hooks added to or removed from the workspace's .autoagent/config.json, the
rest of the file kept; a file it cannot change is initd's error, one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from initd.commands.config import config
from initd.errors import InitdError, UsageError


def test_on_and_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = str(tmp_path)
    assert config(["set-auto-commit", "true", "--workspace", ws]) == 0
    assert "added the git-commit hook" in capsys.readouterr().out
    config(["set-auto-push", "true", "--workspace", ws])
    path = tmp_path / ".autoagent" / "config.json"
    kinds = [e["type"] for e in json.loads(path.read_text())["hooks"]["PostExecutionEnd"]]
    assert kinds == ["git-commit", "git-push"]
    config(["set-auto-commit", "false", "--workspace", ws])
    kinds = [e["type"] for e in json.loads(path.read_text())["hooks"]["PostExecutionEnd"]]
    assert kinds == ["git-push"]


def test_a_file_it_cannot_change_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / ".autoagent" / "config.json"
    path.parent.mkdir()
    path.write_text("{not json")
    with pytest.raises(InitdError, match="not valid JSON"):
        config(["set-auto-push", "true", "--workspace", str(tmp_path)])
    assert path.read_text() == "{not json"


@pytest.mark.parametrize("argv", [["set-auto-merge", "true"], ["set-auto-push", "yes"], []])
def test_a_bad_line(argv: list[str]) -> None:
    with pytest.raises(UsageError):
        config(argv)
