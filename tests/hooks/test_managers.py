"""The git hook managers a repository may already use (initd/hooks/managers.py): a line
for each one the work tree configures, and husky 4's stub found among its siblings;
what cannot be read is no line (these are notes), a file's content never run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from initd.hooks import managers
from initd.state.agentfs import Place


@pytest.mark.parametrize(("files", "named"), [
    ({".husky": None}, ["husky 9"]), ({"lefthook.yml": ""}, ["lefthook"]),
    ({".pre-commit-config.yaml": ""}, ["pre-commit"]),
    ({"package.json": json.dumps({"husky": {"hooks": {}}})}, ["husky 4"]),
    ({"package.json": json.dumps({"simple-git-hooks": {}}), ".lefthook.toml": ""},
     ["lefthook", "simple-git-hooks"]),
    ({"package.json": "[1]"}, []), ({"package.json": "{"}, []), ({}, []),
])
def test_a_line_for_each_manager_configured(tmp_path: Path, files: dict[str, str | None],
                                            named: list[str]) -> None:
    for name, text in files.items():
        if text is None:
            (tmp_path / name).mkdir()
        else:
            (tmp_path / name).write_text(text)
    notes = managers.notes(Place(str(tmp_path)))
    assert notes == [m.note for m in managers.MANAGERS if m.name in named]


def test_a_link_for_package_json_is_never_followed(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.json").write_text(json.dumps({"husky": {}}))
    (tmp_path / "package.json").symlink_to(tmp_path / "elsewhere.json")
    assert managers.notes(Place(str(tmp_path))) == []
    assert managers.notes(Place(str(tmp_path / "none"))) == []


def stub(hooks: Path, name: str, text: bytes) -> None:
    (hooks / name).write_bytes(text)
    os.chmod(hooks / name, 0o755)


def test_husky_4s_stub_from_a_sibling(tmp_path: Path) -> None:
    made = b'#!/bin/sh\n# husky\n. "$(dirname "$0")/husky.sh"\n'
    with Place(str(tmp_path)).open() as hooks:
        assert managers.husky4_stub(hooks) is None  # no husky.sh: not husky 4
        (tmp_path / "husky.sh").write_text("# helper\n")
        assert managers.husky4_stub(hooks) is None  # no stub beside it
        stub(tmp_path, "commit-msg", b"#!/bin/sh\necho not husky\n")
        stub(tmp_path, "pre-push", made)
        assert managers.husky4_stub(hooks) == made
