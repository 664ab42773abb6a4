"""Codex calling initd, against a real hook service (tests/conformance's Session: /etc an
overlay of the test's own when root): requirements.toml's ``allow_managed_hooks_only``
beside a managed layer of initd's line alone is Codex's (run initd alone), not initd's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_hooks_support import Session, session_fixture
from tests.conformance.codex_hooks_answers import read_answer
from tests.conformance.codex_hooks_support import (
    bash,
    deny,
    emit,
    group,
    handler,
    hooks_file,
    write_json,
    write_toml,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cx(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


@pytest.mark.parametrize("line", ["initd emit --from codex",
                                  "/usr/local/bin/initd emit --from codex"])
def test_managed_hooks_of_initds_line_alone_turn_nothing_off_for_initd(cx: Session,
                                                                       line: str) -> None:
    write_toml(cx, "managed", "allow_managed_hooks_only = true\n", name="requirements.toml")
    write_json(cx, "managed", hooks_file(PreToolUse=group(handler(line))))
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(deny("project says no")))))
    cx.start()
    answer = read_answer("PreToolUse", emit(cx, bash(cx.ws, "rm -rf /tmp/x")))
    assert answer.blocked and answer.reason == "project says no", answer


def test_a_managed_hook_of_its_own_keeps_managed_hooks_only(cx: Session) -> None:
    write_toml(cx, "managed", "allow_managed_hooks_only = true\n", name="requirements.toml")
    write_json(cx, "managed", hooks_file(PreToolUse=group(
        handler("initd emit --from codex"), handler("cat >/dev/null"))))
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(deny("project says no")))))
    cx.start()
    assert not read_answer("PreToolUse", emit(cx, bash(cx.ws, "rm -rf /tmp/x"))).blocked
