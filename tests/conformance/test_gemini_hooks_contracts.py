"""initd's Gemini answers, its ``shim gemini`` config and this suite's own fixtures, checked
against Gemini CLI's published contracts, vendored and pinned
(tests/conformance/contracts/gemini/README.md): the settings JSON schema of gemini-cli
(git 5411f113) and the hook types of @google/gemini-cli-core@0.61.0
(dist/src/hooks/types.d.ts)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import INITD
from tests.conformance.gemini_hooks_contracts import (
    CONTRACTS,
    gemini_matches,
    input_fields,
    output_fields,
    pinned_sha256,
    sha256,
    validate_settings,
)
from tests.conformance.gemini_hooks_support import (
    EVENTS,
    FIELDS,
    GeminiSession,
    group,
    hook,
    payload,
    says,
    settings,
)

pytestmark = pytest.mark.timeout(120)

# what each event's hook answers in the answer test: a field of each kind the event has
ANSWERS: dict[str, dict[str, Any]] = {
    "BeforeTool": {"decision": "deny", "reason": "r", "hookSpecificOutput": {
        "hookEventName": "BeforeTool", "tool_input": {"command": "ls"}}},
    "AfterTool": {"systemMessage": "m", "hookSpecificOutput": {
        "hookEventName": "AfterTool", "additionalContext": "c"}},
    "BeforeAgent": {"hookSpecificOutput": {"hookEventName": "BeforeAgent",
                                           "additionalContext": "c"}},
    "AfterAgent": {"decision": "deny", "reason": "again"},
    "BeforeModel": {"hookSpecificOutput": {"hookEventName": "BeforeModel",
                                           "llm_request": {"model": "gemini-2.5-flash"}}},
    "AfterModel": {"continue": False, "stopReason": "enough"},
    "BeforeToolSelection": {"hookSpecificOutput": {"hookEventName": "BeforeToolSelection",
                                                   "toolConfig": {"mode": "NONE"}}},
    "SessionStart": {"systemMessage": "hello", "hookSpecificOutput": {
        "hookEventName": "SessionStart", "additionalContext": "c"}},
    "SessionEnd": {"systemMessage": "bye"},
    "PreCompress": {"systemMessage": "compressing"},
    "Notification": {"systemMessage": "noted"},
}


@pytest.fixture
def gs(tmp_path: Path) -> Iterator[GeminiSession]:
    session = GeminiSession(tmp_path)
    try:
        yield session
    finally:
        session.stop()


def test_the_vendored_contracts_are_the_pinned_ones() -> None:
    """contracts/gemini/README.md: each vendored file with the sha256 it was taken with."""
    pinned = pinned_sha256()
    assert set(pinned) == {"hooks-types.d.ts", "hookTranslator.d.ts", "settings.schema.json"}
    for name, digest in pinned.items():
        assert sha256(CONTRACTS / name) == digest, name


@pytest.mark.parametrize("event", EVENTS)
def test_the_suites_payloads_are_geminis_inputs(event: str, gs: GeminiSession) -> None:
    """types.d.ts <Event>Input (extends HookInput): the fixture of each event has every
    field the type requires and no field it does not know."""
    fields = input_fields(event)
    data = payload(gs, event)
    missing = [name for name, required in fields.items() if required and name not in data]
    unknown = [name for name in data if name not in fields]
    assert not missing and not unknown, (missing, unknown)
    assert set(FIELDS[event]) <= set(fields)


def test_the_suites_settings_are_valid_settings() -> None:
    """settings.schema.json (hooks.<Event>: HookDefinitionArray; hooksConfig)."""
    data = {"hooksConfig": {"enabled": True, "disabled": ["noisy"], "notifications": False},
            **settings(**{event: group(hook("echo '{}'", name="n", timeout=5000,
                                            description="d"), matcher="*", sequential=True)
                          for event in EVENTS})}
    assert validate_settings(data) == []
    assert validate_settings({"hooks": {"BeforeTool": [{"hooks": [{"timeout": "5s"}]}]}})


@pytest.mark.parametrize("event", EVENTS)
def test_initds_answer_has_only_the_fields_of_geminis_output_type(gs: GeminiSession,
                                                                  event: str) -> None:
    """types.d.ts HookOutput (continue, stopReason, suppressOutput, systemMessage,
    decision, reason, hookSpecificOutput) and each event's own Output interface
    (hookSpecificOutput's fields; NotificationOutput and PreCompressOutput: suppressOutput
    and systemMessage only)."""
    gs.gemini_project(settings(**{event: group(hook("cat >/dev/null; " +
                                                    says(ANSWERS[event])))}))
    gs.start()
    answer = gs.ask(payload(gs, event))
    assert answer.valid, answer
    top, specific = output_fields(event)
    data = answer.output or {}
    assert set(data) <= top, (set(data) - top, answer)
    if "hookSpecificOutput" in data:
        assert specific is not None, answer
        assert set(data["hookSpecificOutput"]) <= specific, answer


def shim(home: Path, *more: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INITD_", "GEMINI_"))}
    return subprocess.run([*INITD, "shim", "gemini", *more], capture_output=True, text=True,
                          timeout=60, env={**env, "HOME": str(home)}, cwd=str(home))


def routed(data: dict[str, Any]) -> None:
    """``data`` (a settings.json) routes every Gemini event, whatever its tool or source,
    to ``initd emit --from gemini``."""
    hooks = data.get("hooks", {})
    assert set(EVENTS) <= set(hooks), set(EVENTS) - set(hooks)
    for event in EVENTS:
        values = {"BeforeTool": ["run_shell_command", "write_file", "mcp_gh_create_issue"],
                  "AfterTool": ["replace", "read_file"],
                  "SessionStart": ["startup", "resume", "clear"],
                  "SessionEnd": ["exit", "clear", "logout", "prompt_input_exit", "other"],
                  "PreCompress": ["auto", "manual"]}.get(event, ["-"])
        for value in values:
            assert any(gemini_matches(event, d.get("matcher"), value) and any(
                "emit" in h.get("command", "") and "--from gemini" in
                h.get("command", "").replace("--from=", "--from ") for h in d["hooks"])
                for d in hooks[event]), (event, value, hooks[event])


def test_the_printed_shim_is_a_valid_settings_file_routing_every_event(tmp_path: Path
                                                                       ) -> None:
    """The interface contract 4: `initd shim gemini` prints the config that routes every
    event the agent has to `initd emit --from gemini`, valid by the agent's published
    schema (settings.schema.json) and naming every event of the reference."""
    done = shim(tmp_path)
    assert done.returncode == 0, done
    data = json.loads(done.stdout)
    if "hooks" not in data and set(data) <= set(EVENTS):
        data = {"hooks": data}
    assert validate_settings(data) == [], validate_settings(data)
    routed(data)
    assert not (tmp_path / ".gemini" / "settings.json").exists()


def test_shim_write_merges_into_the_users_settings(tmp_path: Path) -> None:
    """The interface contract 4: "--write merges it into the user's own config file
    ($HOME/...) without losing what is there" (Gemini's user file: ~/.gemini/settings.json,
    CONFIGURATION "User settings file"); a second --write changes nothing."""
    path = tmp_path / ".gemini" / "settings.json"
    path.parent.mkdir()
    mine = {"type": "command", "command": "/opt/audit.sh", "name": "audit", "timeout": 3000}
    path.write_text(json.dumps({
        "ui": {"theme": "GitHub"}, "hooksConfig": {"notifications": False},
        "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [mine]}]}}))
    done = shim(tmp_path, "--write")
    assert done.returncode == 0, done
    data = json.loads(path.read_text())
    assert data["ui"] == {"theme": "GitHub"} and data["hooksConfig"]["notifications"] is False
    assert any(d.get("matcher") == "write_file" and mine in d["hooks"]
               for d in data["hooks"]["BeforeTool"]), data
    assert validate_settings(data) == [], validate_settings(data)
    routed(data)
    once = path.read_text()
    assert shim(tmp_path, "--write").returncode == 0
    assert json.loads(path.read_text()) == json.loads(once)
