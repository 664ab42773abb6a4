"""OpenAI Codex hooks against Codex's machine-readable contracts: initd's answers to Codex
are valid by the output schemas @openai/codex@0.171.0 carries, a Codex hook fed an event
another agent sent gets a payload valid by Codex's input schema, and ``initd shim codex``
prints a hooks config valid by SchemaStore's codex-hooks.json that routes every event.
References: codex_hooks_support (CODEX, STORE, HOOKS); contracts/codex/README.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import INITD, Session, session_fixture
from tests.conformance.codex_hooks_support import (
    EVENTS,
    emit,
    group,
    handler,
    hooks_file,
    payload,
    prints,
    schema,
    store_schema,
    validate,
    write_json,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cx(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


ANSWERS: dict[str, object] = {
    "PreToolUse": {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                          "permissionDecision": "deny",
                                          "permissionDecisionReason": "no"}},
    "PermissionRequest": {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                 "decision": {"behavior": "deny",
                                                              "message": "no"}}},
    "PostToolUse": {"decision": "block", "reason": "looked wrong",
                    "hookSpecificOutput": {"hookEventName": "PostToolUse",
                                           "additionalContext": "ctx"}},
    "UserPromptSubmit": {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                "additionalContext": "ctx"}},
    "SessionStart": {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                            "additionalContext": "ctx"}},
    "SubagentStart": {"hookSpecificOutput": {"hookEventName": "SubagentStart",
                                             "additionalContext": "ctx"}},
    "Stop": {"decision": "block", "reason": "keep going"},
    "SubagentStop": {"decision": "block", "reason": "keep going"},
    "PreCompact": {"systemMessage": "compacting"},
    "PostCompact": {"systemMessage": "compacted"},
    "Interrupt": {"systemMessage": "interrupted"},
}


@pytest.mark.parametrize("event", [e for e in EVENTS if e != "SessionEnd"])
def test_initds_answer_is_valid_by_codex_output_schema(cx: Session, event: str) -> None:
    """CODEX ``<event>.command.output.schema.json`` (draft-07, ``"additionalProperties":
    false``); SRC output_parser.rs ``parse_json``: stdout that is not one such object is
    "invalid ... JSON output" to Codex. Whatever a hook said, initd's stdout on exit 0 is
    empty or one JSON object valid by the event's schema."""
    write_json(cx, "project", hooks_file(**{event: group(handler(prints(ANSWERS[event])))}))
    cx.start()
    proc = emit(cx, payload(event, cx.ws))
    assert proc.returncode in (0, 2), proc
    if proc.returncode == 0 and proc.stdout.strip():
        validate(json.loads(proc.stdout), schema(event, "output"))


def test_a_claude_bash_event_reaches_a_codex_hook_in_codex_shape(cx: Session) -> None:
    """The interface contract (brief, 2): "A hook gets on stdin the payload in ITS OWN
    agent's shape (a Gemini hook sees Gemini's BeforeTool input even when Claude sent a
    PreToolUse for Bash)". CODEX pre-tool-use.command.input: every field required,
    ``"additionalProperties": false``; Codex's shell tool is ``tool_name`` "Bash" with
    ``tool_input.command``."""
    write_json(cx, "project", hooks_file(PreToolUse=group(handler(cx.record("h")),
                                                          matcher="Bash")))
    cx.start()
    claude = {"session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": str(cx.ws),
              "permission_mode": "default", "hook_event_name": "PreToolUse",
              "tool_name": "Bash", "tool_input": {"command": "git status"},
              "tool_use_id": "toolu_01ABC123"}
    emit(cx, claude, agent="claude")
    seen = cx.seen("h")
    validate(seen, schema("PreToolUse", "input"))
    assert seen["tool_name"] == "Bash" and seen["tool_input"] == {"command": "git status"}


def shim(home: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*INITD, "shim", "codex", *more], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "HOME": str(home)})


def as_hooks(text: str) -> dict[str, Any]:
    """The printed snippet as a hooks.json object (or the [hooks] of a config.toml)."""
    try:
        data: dict[str, Any] = json.loads(text)
    except ValueError:
        data = {"hooks": tomllib.loads(text)["hooks"]}
    return data


def routes(config: dict[str, Any], event: str) -> bool:
    return any("emit" in h.get("command", "") and "codex" in h.get("command", "")
               for g in config["hooks"].get(event, []) for h in g["hooks"])


def test_the_shim_is_valid_by_the_schema_and_routes_every_event(tmp_path: Path) -> None:
    """Issue 37: "A verb writes (as the agent user) or prints that line for each agent";
    STORE codex-hooks.json; CODEX 0.171.0's events (its input schemas: SessionStart,
    SessionEnd, PreToolUse, PermissionRequest, PostToolUse, PreCompact, PostCompact,
    UserPromptSubmit, SubagentStart, SubagentStop, Stop, Interrupt). Each event's group
    has no matcher, or one that matches all (SRC: "`*`" or empty)."""
    proc = shim(tmp_path)
    assert proc.returncode == 0, proc.stderr
    config = as_hooks(proc.stdout)
    validate(config, store_schema())
    for event in EVENTS:
        assert routes(config, event), event
        assert all(g.get("matcher") in (None, "", "*") for g in config["hooks"][event])


def test_shim_write_keeps_what_the_user_had(tmp_path: Path) -> None:
    """Issue 37 / the brief (4): "`--write` merges it into the user's own config file
    ($HOME/...) without losing what is there". The user's Stop hook and config.toml
    settings survive; afterwards every event routes to ``initd emit --from codex``."""
    codex = tmp_path / ".codex"
    codex.mkdir()
    mine = hooks_file(Stop=group(handler("/usr/local/bin/notify-done", timeout=5)))
    (codex / "hooks.json").write_text(json.dumps(mine))
    (codex / "config.toml").write_text('model = "gpt-5.5"\n[features]\nhooks = true\n')
    proc = shim(tmp_path, "--write")
    assert proc.returncode == 0, proc.stderr
    data = json.loads((codex / "hooks.json").read_text())
    toml = tomllib.loads((codex / "config.toml").read_text())
    assert toml["model"] == "gpt-5.5"
    merged = {"hooks": {**toml.get("hooks", {}), **data["hooks"]}}
    validate(data, store_schema())
    assert any(h["command"] == "/usr/local/bin/notify-done"
               for g in data["hooks"]["Stop"] for h in g["hooks"])
    assert all(routes(merged, event) for event in EVENTS)


def test_the_shim_line_in_the_users_file_is_not_run_as_a_hook(cx: Session) -> None:
    """The shim line lives in ~/.codex/hooks.json, a file initd reads as Codex's user layer
    (HOOKS: "`~/.codex/hooks.json`"). initd must not run its own route back into itself:
    one emit runs the user's other hook once, and answers."""
    shim(cx.home, "--write")
    data = json.loads((cx.home / ".codex" / "hooks.json").read_text())
    data["hooks"]["PreToolUse"].append(group(handler(cx.record("mine"))))
    write_json(cx, "user", data)
    cx.start()
    proc = emit(cx, payload("PreToolUse", cx.ws), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert cx.runs("mine") == 1
