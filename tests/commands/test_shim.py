"""``initd shim AGENT`` (initd/commands/shim.py): the hook config that sends every event
of the agent to initd, printed, or merged into the user's own file (what it held kept, no
link followed below the home, a file that is no JSON object left as it is). Each agent's
shim through its real wire: tests/events/test_wire.py and tests/conformance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from initd.commands import shim
from initd.errors import InitdError


def test_printed(capsys: pytest.CaptureFixture[str]) -> None:
    assert shim.shim(["cursor"]) == 0
    config = json.loads(capsys.readouterr().out)
    assert config["hooks"]["stop"][0]["command"].endswith("initd emit --from cursor")
    assert shim.shim(["vscode", "--command", "/opt/initd/bin/initd emit --from vscode"]) == 0
    assert "/opt/initd/bin/initd" in capsys.readouterr().out


def test_merged_into_the_users_own_file(tmp_path: Path) -> None:
    path = tmp_path / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"theme": "dark", "hooks": {"BeforeTool": [{"a": 1}]}}))
    written = shim.write(str(tmp_path), ".gemini/settings.json",
                         {"hooks": {"BeforeTool": [{"b": 2}], "AfterTool": [{"c": 3}]}})
    assert written == str(path)
    assert json.loads(path.read_text()) == {"theme": "dark", "hooks": {
        "BeforeTool": [{"a": 1}, {"b": 2}], "AfterTool": [{"c": 3}]}}
    again = shim.write(str(tmp_path), ".gemini/settings.json",
                       {"hooks": {"BeforeTool": [{"b": 2}]}})
    assert json.loads(Path(again).read_text())["hooks"]["BeforeTool"] == [{"a": 1}, {"b": 2}]


@pytest.mark.parametrize("text", ["{", "[1]", '"text"'])
def test_a_file_that_is_no_json_object_is_left_as_it_is(tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(InitdError, match="left as it is"):
        shim.write(str(tmp_path), "c.json", {"hooks": {}})
    assert path.read_text() == text


def test_no_link_is_followed_below_the_home(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / ".cursor").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError):
        shim.write(str(tmp_path), ".cursor/hooks.json", {"hooks": {}})
    assert list((tmp_path / "elsewhere").iterdir()) == []
    (tmp_path / "target.json").write_text("{}")
    (tmp_path / "hooks.json").symlink_to(tmp_path / "target.json")
    with pytest.raises(OSError, match="a symbolic link: not read"):
        shim.write(str(tmp_path), "hooks.json", {"hooks": {"x": 1}})
    assert (tmp_path / "target.json").read_text() == "{}"


def test_merge() -> None:
    assert shim.merge({"a": {"b": [1]}, "k": 1}, {"a": {"b": [1, 2], "c": 3}}) == {
        "a": {"b": [1, 2], "c": 3}, "k": 1}
    assert shim.merge([1], "x") == "x" and shim.merge({"a": 1}, {"a": None}) == {"a": None}
