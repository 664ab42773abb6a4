"""The cross-agent guard matrix, Codex's row: three guards written once as a Claude Code
project hook (.claude/settings.json) hold for Codex's real payloads. Codex's shell tool
reaches hooks as ``tool_name`` "Bash" with ``tool_input.command``; its file edits as
``apply_patch`` with the patch in ``tool_input.command`` (SRC ``HookToolName``; HOOKS
matcher table: "Support includes `Bash`, `apply_patch`*"). Codex's "blocked" is read by
codex_hooks_answers.read_answer (exit 2 with a reason, or ``permissionDecision: deny``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import (
    Session,
    command,
    group,
    hooks,
)
from tests.conformance.codex_hooks_answers import read_answer
from tests.conformance.codex_hooks_support import bash, emit, patch_adding, schema, validate

pytestmark = pytest.mark.timeout(120)

ENV_GUARD = ("f=$(python3 -c 'import json,sys; print(json.load(sys.stdin)"
             "[\"tool_input\"].get(\"file_path\", \"\"))'); "
             "case \"$f\" in *.env) echo \"no writes to $f\" >&2; exit 2;; esac; exit 0")


@pytest.fixture
def cx(tmp_path: Path) -> Iterator[Session]:
    session = Session(tmp_path)
    session.project(hooks(PreToolUse=[
        group(command("echo 'rm is not allowed' >&2; exit 2", **{"if": "Bash(rm *)"}),
              command("echo 'no pushes' >&2; exit 2", **{"if": "Bash(git push *)"}),
              matcher="Bash"),
        group(command(ENV_GUARD), matcher="Write|Edit")]))
    try:
        session.start()
        yield session
    finally:
        session.stop()


def cases(ws: Path) -> dict[str, dict[str, Any]]:
    return {"rm -rf": bash(ws, "rm -rf /tmp/x"),
            "force push": bash(ws, "git push --force origin main"),
            ".env": patch_adding(ws, ".env", "TOKEN=1")}


@pytest.mark.parametrize("case", ["rm -rf", "force push", ".env"])
def test_a_claude_guard_blocks_codex(cx: Session, case: str) -> None:
    """Brief (5): "must give YOUR agent's documented 'blocked' answer for your agent's
    real payload of `rm -rf /tmp/x`, `git push --force origin main`, and a write of
    `.env`". CODEX pre-tool-use.command.input validates each payload."""
    sent = cases(cx.ws)[case]
    validate(sent, schema("PreToolUse", "input"))
    answer = read_answer("PreToolUse", emit(cx, sent))
    assert answer.failed is None and answer.blocked and answer.reason, answer


def test_ls_is_allowed(cx: Session) -> None:
    """Brief (5): "and allow `ls`": no block, nothing Codex reads as an error."""
    answer = read_answer("PreToolUse", emit(cx, bash(cx.ws, "ls")))
    assert answer.failed is None and not answer.blocked, answer
