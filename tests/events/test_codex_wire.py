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


def test_a_patch_of_three_files_is_three_runs_of_a_claude_guard_once_each(cx: Session
                                                                          ) -> None:
    """Codex's apply_patch of three files: a Claude Code ``Write|Edit`` hook runs once per
    file (a journal step each), Codex's own hook once, on the patch as Codex sent it; the
    same request delivered again (its Idempotency-Key) runs none of them again."""
    from initd.commands import client
    from tests.conformance.claude_hooks_support import command, hooks
    from tests.conformance.claude_hooks_support import group as claude_group

    paths = cx.out / "claude-paths"
    cx.project(hooks(PreToolUse=claude_group(command(
        "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"tool_input\"]"
        f"[\"file_path\"])' >> {paths}"), matcher="Write|Edit")))
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(cx.record("codex")),
                                                          matcher="apply_patch")))
    cx.start()
    sent = {"session_id": "s", "cwd": str(cx.ws), "hook_event_name": "PreToolUse",
            "tool_name": "apply_patch", "tool_use_id": "t", "turn_id": "u", "model": "m",
            "permission_mode": "default", "transcript_path": None, "tool_input": {
                "command": "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Update File: b.txt\n"
                           "@@\n-b\n+B\n*** Add File: c.txt\n+c\n*** End Patch\n"}}
    answers = [client.call("POST", "/v1/events/PreToolUse?from=codex", sent, sock=cx.sock,
                           key="patch-of-three") for _ in range(2)]
    for code, outcome in answers:
        assert code == 200 and not outcome["blocked"], outcome
        assert len(outcome["results"]) == 4, outcome["results"]
    assert sorted(paths.read_text().split()) == [f"{cx.ws}/{n}.txt" for n in "abc"]
    assert cx.runs("codex") == 1
    assert cx.seen("codex")["tool_input"] == sent["tool_input"]  # (Codex's, as sent)


def test_no_file_name_makes_one_views_step_another_views(cx: Session) -> None:
    """A hook with ``{file}`` runs once per file of the payload, and, for a patch of
    several files, once per view: each run has a journal step of its own, and a step
    seen again in one request gets the first one's result. Files the agent names "x" and
    "x #2" must not make the second view's run of "x" the first view's of "x #2"."""
    from initd.commands import client

    log = cx.out / "runs"
    (cx.ws / ".nyzhi").mkdir()
    (cx.ws / ".nyzhi" / "config.toml").write_text(
        '[[agent.hooks]]\nevent = "pre_tool"\n'
        f'command = "cat >/dev/null; echo {{file}} >> {log}"\n')
    cx.start()
    sent = {"session_id": "s", "cwd": str(cx.ws), "hook_event_name": "PreToolUse",
            "tool_name": "apply_patch", "tool_use_id": "t", "turn_id": "u", "model": "m",
            "permission_mode": "default", "transcript_path": None, "files": ["x", "x #2"],
            "tool_input": {"command": "*** Begin Patch\n*** Add File: a.txt\n+a\n"
                                      "*** Add File: b.txt\n+b\n*** End Patch\n"}}
    code, outcome = client.call("POST", "/v1/events/PreToolUse?from=codex", sent,
                                sock=cx.sock, key="files-and-views")
    assert code == 200 and len(outcome["results"]) == 4, outcome
    assert sorted(log.read_text().splitlines()) == ["x", "x", "x #2", "x #2"]
