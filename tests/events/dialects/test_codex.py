"""Codex's hook files as initd loads them (initd/events/dialects/codex.py)."""

from __future__ import annotations

import json
from typing import Any


def test_hooks_state_is_no_hook_and_no_second_form(tmp_path: Any) -> None:
    """``[hooks.state."<key>"]`` (Codex's record of a person's review) beside a hooks.json:
    one hook, and no warning that the layer has hooks in both forms."""
    from initd.events.dialects import codex

    folder = tmp_path / "ws" / ".codex"
    folder.mkdir(parents=True)
    (folder / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "true"}]}]}}))
    (folder / "config.toml").write_text('[hooks.state."x:stop:0:0"]\nenabled = false\n')
    found = codex.load(str(tmp_path / "ws"), str(tmp_path / "home"))
    assert [h.event for h in found.hooks] == ["stop"] and found.problems == []
