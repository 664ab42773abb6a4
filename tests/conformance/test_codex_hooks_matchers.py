"""OpenAI Codex hooks: matchers (exact names and ``|`` lists, regular expressions, ``*``
and empty, the tool aliases ``Write``/``Edit`` of ``apply_patch``, the events that
ignore ``matcher``), timeouts (seconds, 600 by default), and bad files (one that does not
parse, an unknown event name, an invalid matcher). References: codex_hooks_support.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_hooks_support import Session, q, session_fixture
from tests.conformance.codex_hooks_answers import read_answer
from tests.conformance.codex_hooks_support import (
    bash,
    deny,
    emit,
    group,
    handler,
    hooks_file,
    patch_adding,
    payload,
    write_json,
    write_toml,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cx(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


# matcher -> the tool names it selects and one it does not
MATCHERS = [
    ("Bash", ["Bash"], ["BashOutput", "bash"]),
    ("Bash|apply_patch", ["Bash", "apply_patch"], ["mcp__fs__write_file"]),
    ("^Bash", ["Bash", "BashOutput"], ["apply_patch"]),
    ("mcp__fs__.*", ["mcp__fs__write_file"], ["mcp__git__push"]),
    ("mcp__fs", [], ["mcp__fs__write_file"]),
    ("*", ["Bash", "mcp__fs__write_file"], []),
    ("", ["Bash", "apply_patch"], []),
]


@pytest.mark.parametrize(("matcher", "hits", "misses"), MATCHERS)
def test_tool_matchers(cx: Session, matcher: str, hits: list[str], misses: list[str]) -> None:
    """SRC events/common.rs ``matches_matcher``: "`*`" or empty matches all
    (``is_match_all_matcher``); a matcher of only ASCII letters, digits, ``_`` and ``|``
    is a list of exact names (``literal_matcher_uses_exact_matching``: "mcp__memory" does
    not match "mcp__memory__create_entities"); anything else is a regular expression
    searched in the name (``matcher_uses_regex_when_it_contains_regex_characters``: "^Bash"
    matches "BashOutput"). HOOKS: "`PreToolUse` | tool name | Support includes `Bash`,
    `apply_patch`*, and MCP tool names"."""
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(cx.record("m")),
                                                          matcher=matcher)))
    cx.start()
    for name in hits + misses:
        emit(cx, payload("PreToolUse", cx.ws, tool_name=name, tool_input={"command": "x"}))
    assert cx.runs("m") == len(hits)


@pytest.mark.parametrize("matcher", ["Write", "Edit", "Edit|Write", "apply_patch"])
def test_apply_patch_is_matched_by_its_aliases(cx: Session, matcher: str) -> None:
    """SRC ``HookToolName::apply_patch``: "The serialized name remains `apply_patch` ...
    `Write` and `Edit` are accepted as matcher aliases for compatibility with hook
    configurations that describe edits using Claude Code-style names." The hook sees
    ``tool_name`` "apply_patch"."""
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(cx.record("m")),
                                                          matcher=matcher)))
    cx.start()
    sent = patch_adding(cx.ws, "notes.txt")
    emit(cx, sent)
    assert cx.seen("m") == sent


def test_session_start_matches_its_source(cx: Session) -> None:
    """STORE: SessionStart "The matcher filters the start source, such as startup,
    resume, or clear"; SRC common.rs ``supported_events_keep_matchers``:
    "startup|resume"."""
    write_json(cx, "project", hooks_file(SessionStart=group(handler(cx.record("s")),
                                                            matcher="startup|resume")))
    cx.start()
    for source in ("startup", "clear", "resume", "compact"):
        emit(cx, payload("SessionStart", cx.ws, source=source))
    assert cx.runs("s") == 2


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop", "PreCompact", "PostCompact"])
def test_events_that_ignore_the_matcher(cx: Session, event: str) -> None:
    """SRC common.rs ``matcher_pattern_for_event``: PreCompact, PostCompact,
    UserPromptSubmit and Stop => ``None`` (``unsupported_events_ignore_matchers``), and
    ``user_prompt_submit_ignores_invalid_matcher_during_discovery``. STORE:
    "Codex currently ignores matcher for this event." """
    write_json(cx, "project", hooks_file(**{event: group(handler(cx.record("e")),
                                                         matcher="^nothing-matches$")}))
    cx.start()
    emit(cx, payload(event, cx.ws))
    assert cx.runs("e") == 1


def test_subagent_events_match_the_agent_type(cx: Session) -> None:
    """STORE: SubagentStart/SubagentStop "The matcher filters the subagent type"; SRC
    stop.rs ``matcher_input``: ``SubagentStop { agent_type, .. } => Some(agent_type)``."""
    write_json(cx, "project", hooks_file(SubagentStop=group(handler(cx.record("s")),
                                                            matcher="explorer")))
    cx.start()
    emit(cx, payload("SubagentStop", cx.ws, agent_type="worker"))
    emit(cx, payload("SubagentStop", cx.ws, agent_type="explorer"))
    assert cx.runs("s") == 1


def test_an_invalid_matcher_skips_its_group_only(cx: Session) -> None:
    """SRC discovery.rs: "invalid matcher {matcher:?} in {path}: {err}" is a warning and
    that group is skipped (``continue``); the file's other groups load. issue 37: "an
    unknown event name is one warning naming the file"; the service's log names the file."""
    path = write_json(cx, "project", hooks_file(PreToolUse=[
        group(handler(cx.record("bad")), matcher="["),
        group(handler(cx.record("good")), matcher="Bash")]))
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert cx.runs("good") == 1 and cx.runs("bad") == 0
    assert any(str(path) in line or ".codex/hooks.json" in line for line in cx.log_lines())


def test_an_unknown_event_name_is_a_warning_naming_file_and_key(cx: Session) -> None:
    """Issue 37: "an unknown event name is one warning naming the file and the name (a
    typo in a guard's event is never silent)". (Codex itself drops an unknown key
    silently: SRC ``HookEventsToml`` has no ``deny_unknown_fields``.) The file's other
    events still load."""
    write_json(cx, "project", hooks_file(PreToolUze=group(handler("true")),
                                         PreToolUse=group(handler(cx.record("ok")))))
    cx.start()
    emit(cx, bash(cx.ws, "ls"))
    assert cx.runs("ok") == 1
    lines = [line for line in cx.log_lines() if "PreToolUze" in line]
    assert len(lines) == 1 and ".codex/hooks.json" in lines[0], cx.log_lines()


@pytest.mark.parametrize("where", ["hooks.json", "config.toml"])
def test_a_file_that_does_not_parse_blocks_the_guard_event(cx: Session, where: str) -> None:
    """SRC discovery.rs: "failed to parse hooks config {path}: {err}" / "failed to parse
    TOML hooks in {path}" (Codex warns and runs without that file's hooks). initd's rule
    (issue 37, invariant 12): "a guard never passes because initd could not load, parse
    or run it": the file is a load error naming it, and PreToolUse is refused."""
    if where == "hooks.json":
        path = write_json(cx, "project", '{"hooks": {"PreToolUse": [')
    else:
        path = write_toml(cx, "project", "[[hooks.PreToolUse]\nmatcher = \n")
    cx.start()
    answer = read_answer("PreToolUse", emit(cx, bash(cx.ws, "ls")))
    assert answer.blocked, answer
    assert any(str(path.relative_to(cx.ws)) in line for line in cx.log_lines())


def test_hooks_json_has_no_other_top_level_key(cx: Session) -> None:
    """SRC hook_config.rs: ``#[serde(deny_unknown_fields)] pub struct HooksFile``; STORE:
    top level ``"additionalProperties": false``. A hooks.json with another key does not
    load (a load error), so the guard event is refused."""
    write_json(cx, "project", {"hooks": {"PreToolUse": [group(handler("true"))]},
                               "version": 1})
    cx.start()
    assert read_answer("PreToolUse", emit(cx, bash(cx.ws, "ls"))).blocked


@pytest.mark.slow
def test_a_hook_past_its_timeout_decides_nothing(cx: Session) -> None:
    """STORE: ``timeout`` "Timeout in seconds."; SRC command_runner.rs: past it, "hook
    timed out after {}s", the run has no exit code and is ``Failed``: it does not block
    (a PreToolUse that waited would have denied). The other hook's deny stands."""
    write_json(cx, "project", hooks_file(PreToolUse=group(
        handler(f"cat >/dev/null; sleep 30; touch {q(cx.out / 'late')}; "
                "echo late >&2; exit 2", timeout=1),
        handler(cx.record("fast")))))
    cx.start()
    answer = read_answer("PreToolUse", emit(cx, bash(cx.ws, "ls")))
    assert not answer.blocked and cx.runs("fast") == 1


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_default_timeout_is_600_seconds(cx: Session) -> None:
    """SRC discovery.rs: ``timeout_sec.unwrap_or(600).max(1)``; STORE: "Codex uses 600
    seconds when omitted." A hook that answers after 65 s (past Claude Code's old
    60-second default) still decides."""
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(
        "cat >/dev/null; sleep 65; echo 'slow but sure' >&2; exit 2"))))
    cx.start()
    answer = read_answer("PreToolUse", emit(cx, bash(cx.ws, "ls")))
    assert answer.blocked and answer.reason == "slow but sure"


def test_a_zero_timeout_is_one_second(cx: Session) -> None:
    """SRC discovery.rs ``.max(1)``: ``timeout: 0`` (STORE: ``"minimum": 0``) is one
    second, not "no time at all": a hook that denies at once still denies."""
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(deny("quick"), timeout=0))))
    cx.start()
    assert read_answer("PreToolUse", emit(cx, bash(cx.ws, "ls"))).blocked
