"""initd's Gemini answers read by Gemini CLI itself, the pinned packages installed with npm
(gemini_hooks_contracts.npm_packages): ``initd emit --from gemini`` run as a hook by the
engine of @google/gemini-cli-core@0.61.0 (HookRunner, HookAggregator: the code that reads
every hook's exit code and output), and the real ``gemini`` of @google/gemini-cli@0.61.0
running a whole turn without a model or network (its hidden ``--fake-responses-non-strict
FILE``, which its own integration tests use), calling initd from its settings.json.

Reference: https://geminicli.com/docs/hooks/reference (as shipped in
@google/gemini-cli@0.61.0 = gemini-cli git 5411f113, 2026-08-21)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import INITD, command
from tests.conformance.gemini_hooks_contracts import engine_reads, npm_packages
from tests.conformance.gemini_hooks_support import (
    GeminiSession,
    exits,
    group,
    hook,
    payload,
    says,
    settings,
    tool,
)

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def gs(tmp_path: Path) -> Iterator[GeminiSession]:
    session = GeminiSession(tmp_path)
    try:
        yield session
    finally:
        session.stop()


def emit_line(sock: str) -> str:
    """The hook command that routes an event to initd (the interface contract 1)."""
    return shlex.join([*INITD, "emit", "--from", "gemini", "--socket", sock])


def agent_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("INITD_", "GEMINI_", "GOOGLE_", "CLAUDE_"))}
    return {**env, "HOME": str(home), "GEMINI_CLI_HOME": str(home)}


def engine(gs: GeminiSession, event: str, data: dict[str, Any],
           sock: str | None = None) -> dict[str, Any]:
    return engine_reads(event, emit_line(sock or gs.sock), data, gs.ws,
                        agent_env(gs.root / "agent-home"))


def test_the_engine_reads_initds_exit_2_block_as_blocked(gs: GeminiSession) -> None:
    """REFERENCE "2: System Block. The action is blocked; stderr is used as the rejection
    reason", as @google/gemini-cli-core@0.61.0's HookRunner and HookAggregator read it."""
    gs.gemini_project(settings(BeforeTool=group(hook("cat >/dev/null; " +
                                                     exits(2, "rm is not allowed")))))
    gs.start()
    read = engine(gs, "BeforeTool", tool(gs, "run_shell_command", command="rm -rf /tmp/x"))
    assert read["blocked"] is True, read
    assert "rm is not allowed" in read["reason"], read


def test_the_engine_reads_initds_allow_as_an_allow(gs: GeminiSession) -> None:
    """REFERENCE "0: Success. stdout is parsed as JSON": the engine gets no block, no stop,
    and no plain text (outputFormat "json" or no output at all)."""
    gs.gemini_project(settings(BeforeTool=group(hook("cat >/dev/null; " +
                                                     says({"decision": "allow"})))))
    gs.start()
    read = engine(gs, "BeforeTool", tool(gs, "run_shell_command", command="ls"))
    assert read["success"] is True and read["blocked"] is False and read["stop"] is False
    assert read["outputFormat"] in ("json", None), read


def test_the_engine_reads_initds_rewrite_and_context(gs: GeminiSession) -> None:
    """REFERENCE BeforeTool "hookSpecificOutput.tool_input" and BeforeAgent
    "hookSpecificOutput.additionalContext", through BeforeToolHookOutput.getModifiedToolInput
    and DefaultHookOutput.getAdditionalContext."""
    gs.gemini_project(settings(
        BeforeTool=group(hook("cat >/dev/null; " + says({"hookSpecificOutput": {
            "hookEventName": "BeforeTool", "tool_input": {"command": "npm ci"}}}))),
        BeforeAgent=group(hook("cat >/dev/null; " + says({"hookSpecificOutput": {
            "hookEventName": "BeforeAgent", "additionalContext": "branch: main"}})))))
    gs.start()
    read = engine(gs, "BeforeTool", tool(gs, "run_shell_command", command="npm i"))
    assert read["blocked"] is False and (read["toolInput"] or {}).get("command") == "npm ci"
    read = engine(gs, "BeforeAgent", payload(gs, "BeforeAgent"))
    assert read["additionalContext"] == "branch: main", read


def test_the_engine_reads_initds_stop(gs: GeminiSession) -> None:
    """REFERENCE "continue: If false, stops the entire agent loop immediately" (the engine's
    shouldStopExecution)."""
    gs.gemini_project(settings(AfterTool=group(hook("cat >/dev/null; " + says(
        {"continue": False, "stopReason": "tests are red"})))))
    gs.start()
    read = engine(gs, "AfterTool", payload(gs, "AfterTool"))
    assert read["stop"] is True, read


def test_the_engine_reads_initds_answer_without_a_service_as_blocked(
        gs: GeminiSession) -> None:
    """The interface contract: no service at the socket is the agent's own block, as
    Gemini's engine reads it (never an allow)."""
    read = engine(gs, "BeforeTool", tool(gs, "run_shell_command", command="ls"),
                  sock=str(gs.root / "nobody.sock"))
    assert read["exitCode"] in (0, 2), read  # (what the reference and the engine agree on)
    assert read["blocked"] is True or read["stop"] is True, read


# the real gemini ----------------------------------------------------------------------

CALL = {"method": "generateContentStream", "response": [{"candidates": [{
    "content": {"role": "model", "parts": [{"functionCall": {
        "name": "run_shell_command", "args": {"command": "COMMAND"}}}]},
    "finishReason": "STOP", "index": 0}]}]}
TEXT = {"method": "generateContentStream", "response": [{"candidates": [{
    "content": {"role": "model", "parts": [{"text": "The command was blocked."}]},
    "finishReason": "STOP", "index": 0}]}]}


def run_gemini(gs: GeminiSession, shell_command: str) -> subprocess.CompletedProcess[str]:
    """The real gemini (0.61.0), headless, its model two canned answers (a
    run_shell_command call, then text), with every event of this turn routed to initd from
    its user settings (a HOME of the agent's own, not the one initd reads)."""
    prefix = npm_packages()
    home = gs.root / "agent-home"
    line = emit_line(gs.sock)
    events = ("SessionStart", "BeforeAgent", "BeforeModel", "BeforeTool", "AfterTool",
              "AfterAgent", "SessionEnd")
    gs._put(home / ".gemini" / "settings.json", {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": False},
        **settings(**{event: group(hook(line, name="initd", timeout=60000))
                      for event in events})})
    fake = gs.root / "model.jsonl"
    call = json.loads(json.dumps(CALL).replace("COMMAND", shell_command))
    fake.write_text(json.dumps(call) + "\n" + json.dumps(TEXT) + "\n")
    gemini = prefix / "node_modules" / ".bin" / "gemini"
    return subprocess.run(
        [str(gemini), "--skip-trust", "--approval-mode=yolo", "--fake-responses-non-strict",
         str(fake), "-p", "clean up"], capture_output=True, text=True, timeout=240,
        cwd=str(gs.ws), env={**agent_env(home), "GEMINI_API_KEY": "not-a-key"})


def test_the_real_gemini_fires_session_start_through_initd(gs: GeminiSession) -> None:
    """REFERENCE SessionStart "Fires on application startup" with "source: startup": the
    real gemini runs the routing line, and initd runs the workspace's hook (here a Claude
    Code SessionStart hook, which gets Claude's shape) for it."""
    gs.project({"hooks": {"SessionStart": [{"hooks": [command(gs.record("start"))]}]}})
    gs.start()
    done = run_gemini(gs, "ls")
    assert done.returncode == 0, done.stderr[-3000:]
    seen = gs.seen("start")
    assert seen["hook_event_name"] == "SessionStart" and seen["source"] == "startup", seen


def test_the_real_gemini_is_stopped_by_a_guard_through_initd(gs: GeminiSession) -> None:
    """The guard matrix end to end: a Claude Code project guard (Bash, if Bash(rm *), exit
    2) stops the real gemini's run_shell_command rm (REFERENCE BeforeTool "Exit Code 2
    (Block Tool): Prevents execution ... The turn continues."): the canary stays, and
    gemini reports "Tool execution blocked" with the guard's reason."""
    canary = gs.root / "canary"
    canary.mkdir()
    gs.project({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [command(
        "echo 'rm is not allowed' >&2; exit 2", **{"if": "Bash(rm *)"})]}]}})
    gs.start()
    done = run_gemini(gs, f"rm -rf {canary}")
    assert canary.exists(), done.stdout + done.stderr[-3000:]
    said = done.stdout + done.stderr
    assert "rm is not allowed" in said, said[-3000:]
