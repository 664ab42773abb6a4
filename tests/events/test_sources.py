"""Where initd finds VS Code's hook files (events/sources.py): VS Code's settings as
it writes them (JSON with comments and trailing commas), and the locations its
``chat.hookFilesLocations`` adds or drops (https://code.visualstudio.com/docs/
agent-customization/hooks, "Local hook file locations", 2026-09-16)."""

from __future__ import annotations

import json

import pytest

from initd.events import sources

WS, HOME = "/w", "/h"


def test_settings_with_comments_and_trailing_commas_are_read() -> None:
    text = """{
      // a comment, "with quotes"
      "chat.useHooks": false, /* another */
      "url": "https://example.com/a//b", "glob": "/*.json", "quote": "a \\" // b",
      "chat.hookFilesLocations": {"custom/hooks": true,},
    }"""
    assert sources.jsonc(text) == {"chat.useHooks": False, "url": "https://example.com/a//b",
                                  "glob": "/*.json", "quote": 'a " // b',
                                  "chat.hookFilesLocations": {"custom/hooks": True}}


@pytest.mark.parametrize("text", ['{"a": 1', '{"a": /* open', "[1,,2]"])
def test_settings_that_are_no_json_with_comments_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        sources.jsonc(text)


def paths(user: object = None, project: object = None) -> list[tuple[str, bool, bool]]:
    found, _ = sources.vscode_locations(WS, HOME, user, project)
    return [tuple(place) for place in found]  # type: ignore[misc]


def test_the_two_folders_come_first_then_what_the_settings_add() -> None:
    user = {sources.SETTING: {"custom/hooks": True, "~/my-hooks/security.json": True,
                             "~/.copilot/hooks": True}}
    project = {sources.SETTING: {"more": True}}
    assert paths(user, project) == [
        ("/w/.github/hooks", True, True), ("/h/.copilot/hooks", True, False),
        ("/w/custom/hooks", True, True), ("/h/my-hooks/security.json", False, False),
        ("/w/more", True, True)]


def test_only_the_users_settings_drop_a_location() -> None:
    found, said = sources.vscode_locations(WS, HOME, {sources.SETTING: {".github/hooks": False}},
                                   {sources.SETTING: {"~/.copilot/hooks": False}})
    assert [place.path for place in found] == ["/h/.copilot/hooks"]
    assert said == [("workspace", f"{sources.SETTING}.~/.copilot/hooks",
                     "a workspace's settings turn no hook location off (the user's may)")]


@pytest.mark.parametrize("key,why", [
    ("/etc/hooks", "outside the workspace and the home: not read"),
    ("../elsewhere", "outside the workspace and the home: not read"),
    (".claude/settings.json", "a Claude Code settings file"),
    ("~/.claude/settings.json", "a Claude Code settings file")])
def test_what_is_not_read_is_said(key: str, why: str) -> None:
    found, said = sources.vscode_locations(WS, HOME, {sources.SETTING: {key: True}}, None)
    assert len(found) == 2 and len(said) == 1
    assert said[0][1] == f"{sources.SETTING}.{key}" and said[0][2].startswith(why)


def test_no_home_no_home_locations() -> None:
    found, said = sources.vscode_locations(WS, "/", {sources.SETTING: {"~/x": True}}, None)
    assert [place.path for place in found] == ["/w/.github/hooks"]
    assert said[0][2] == "no home: not read"


def test_the_snapshot_is_told_only_what_the_settings_add() -> None:
    files = {"/h/.config/Code/User/settings.json": json.dumps(
        {sources.SETTING: {"a.json": True, "b": True, ".github/hooks": True}})}

    def read(path: str) -> bytes:
        if path not in files:
            raise FileNotFoundError(path)
        return files[path].encode()

    assert sources.vscode_added(WS, HOME, read) == (["/w/a.json"], ["/w/b"])
