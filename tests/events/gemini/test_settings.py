"""Which of Gemini CLI's system settings files initd reads (initd/events/gemini/settings.py):
only one root alone can have put there, named by an absolute path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from initd.events.gemini import settings

NOBODY = 65534


@pytest.mark.skipif(os.geteuid() != 0, reason="cannot run here: files of another user "
                    "need root")
def test_only_a_file_root_alone_can_have_put_there_is_read(tmp_path: Path) -> None:
    base = tmp_path / "etc"
    base.mkdir()
    base.chmod(0o755)
    path = base / "settings.json"
    path.write_text("{}")
    assert settings.root_only(str(path)) is None
    assert settings.root_only(str(base / "missing" / "x.json")) is None  # (root's to make)
    os.chown(path, NOBODY, NOBODY)
    assert "is not root's" in str(settings.root_only(str(path)))
    os.chown(path, 0, 0)
    base.chmod(0o777)
    assert "can be written by others" in str(settings.root_only(str(path)))
    base.chmod(0o1777)  # sticky: its entries are their owners'
    assert settings.root_only(str(path)) is None
    base.chmod(0o755)
    theirs = tmp_path / "theirs.json"
    theirs.write_text("{}")
    os.chown(theirs, NOBODY, NOBODY)
    (base / "link.json").symlink_to(theirs)
    assert "is not root's" in str(settings.root_only(str(base / "link.json")))
    path.chmod(0o666)
    assert "can be written by others" in str(settings.root_only(str(path)))


def test_a_relative_variable_is_not_read(tmp_path: Path) -> None:
    found, problems = settings.files("/ws", "/home", {
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH": "etc/settings.json"})
    assert found[3] == ("/etc/gemini-cli/settings.json", "system")
    assert "not an absolute path" in problems[0].reason
