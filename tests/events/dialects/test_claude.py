"""Claude Code's hooks (.claude/settings.json), run by initd: the examples of Claude Code's
hooks reference and guide as written (tests/events/fixtures/claude/), each output field,
the Stop loop's cap (kept across a restart), trust, every way a settings file can be
wrong or hostile, and all of it end to end through a real hook service."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from initd.events import wiring
from initd.events.dialects import claude
from initd.events.stoploop import CAP
from initd.hooks.trust import Trust
from tests.events.support import Workspace
from tests.hooks.support import forget_session, git_repo, hook_context
from tests.service.support import call

FIXTURES = Path(__file__).parent.parent / "fixtures" / "claude"
JQ = shutil.which("jq")  # the documented examples use it; without it, Python stands in
SCRIPTS = {"bash_command_validator": "bash_command_validator.py",
           "user_prompt_submit": "user_prompt_submit.py",
           "pretooluse_approval": "pretooluse_approval.py", "block-rm.sh": "block-rm.sh"}
LOG_JQ = ("jq -r '\"\\(.tool_input.command) - \\(.tool_input.description // \"No "
          "description\")\"' >> ~/.claude/bash-command-log.txt")
LOG_PY = ("python3 -c 'import json,sys; i=json.load(sys.stdin)[\"tool_input\"]; "
          "print(i[\"command\"], \"-\", i.get(\"description\", \"No description\"))' "
          ">> ~/.claude/bash-command-log.txt")
BLOCK_RM_PY = """#!/usr/bin/env python3
import json, sys
if 'rm -rf' in json.load(sys.stdin)['tool_input']['command']:
    print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse',
          'permissionDecision': 'deny',
          'permissionDecisionReason': 'Destructive command blocked by hook'}}))
"""
INITD = [sys.executable, "-m", "initd"]


@pytest.fixture
def cc(ws: Workspace, tmp_path: Path) -> Workspace:
    """The workspace with the agent's home in tmp_path (its ~/.claude, the hooks' HOME:
    never the real one) and the documented scripts in .claude/hooks."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    ws.home = str(home)
    hooks = ws.path / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    for name, target in SCRIPTS.items():
        shutil.copy(FIXTURES / name, hooks / target)
        (hooks / target).chmod(0o755)
    if JQ is None:
        (hooks / "block-rm.sh").write_text(BLOCK_RM_PY)
    return ws


def documented(ws: Workspace) -> None:
    """The fixture settings.json: the reference's and the guide's hooks, as written."""
    text = (FIXTURES / "settings.json").read_text()
    if JQ is None:
        text = text.replace(json.dumps(LOG_JQ), json.dumps(LOG_PY))
    ws.write(".claude/settings.json", text)


def settings(ws: Workspace, hooks: dict[str, Any], name: str = "settings.json") -> None:
    """The settings file, in effect from the next event: a new hook service (the hooks are
    a snapshot taken when it starts; test_a_mid_session_rewrite_… shows a running one)."""
    ws.write(f".claude/{name}", json.dumps({"hooks": hooks}))
    ws.engine = None


def on(event: str, *commands: str, matcher: str | None = None, **more: Any) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": c, **more}
                                       for c in commands]}
    return {event: [group if matcher is None else {"matcher": matcher, **group}]}


def prints(answer: dict[str, Any]) -> str:
    """A command printing ``answer`` (a documented JSON output) on stdout."""
    return f"cat >/dev/null; printf '%s' '{json.dumps(answer)}'"


def bash(command: str, description: str | None = None) -> dict[str, Any]:
    given = {"command": command, **({"description": description} if description else {})}
    return {"tool_name": "Bash", "tool_input": given}


# --- the documented examples


@pytest.mark.slow
def test_documented_pre_tool_use_hooks(cc: Workspace) -> None:
    documented(cc)
    log = Path(cc.home or "") / ".claude" / "bash-command-log.txt"
    # the validator: exit 2 with its stderr blocks; the jq logger runs too
    out = cc.fire("PreToolUse", bash("grep -r TODO src", "Find TODOs"))
    assert out["blocked"] and out["permissionDecision"] == "deny"
    assert out["reason"] == ("• Use 'rg' (ripgrep) instead of 'grep' for better "
                             "performance and features")
    assert log.read_text() == "grep -r TODO src - Find TODOs\n"
    # block-rm.sh, only for `if: Bash(rm *)`: its permissionDecision deny blocks
    out = cc.fire("PreToolUse", bash("rm -rf /tmp/build"))
    assert out["blocked"] and out["permissionDecision"] == "deny"
    assert out["reason"] == "Destructive command blocked by hook"
    assert [r["status"] for r in out["results"]] == ["ok", "ok", "blocked"]
    # a safer rm runs block-rm.sh, which allows it; npm test does not even run it
    assert not cc.fire("PreToolUse", bash("rm file.txt"))["blocked"]
    out = cc.fire("PreToolUse", bash("npm test"))
    assert not out["blocked"] and out["permissionDecision"] is None
    assert len(out["results"]) == 2 and "block-rm" not in json.dumps(out["results"])
    assert log.read_text().splitlines()[1:] == [
        "rm -rf /tmp/build - No description", "rm file.txt - No description",
        "npm test - No description"]
    # the approval example: the deprecated "approve" is allow; suppressOutput hides stdout
    out = cc.fire("PreToolUse", {"tool_name": "Read",
                                 "tool_input": {"file_path": "/ws/README.md"}})
    assert (out["blocked"], out["permissionDecision"], out["reason"]) == (
        False, "allow", "Documentation file auto-approved")
    assert out["results"][0]["stdout"] == "" and out["results"][0]["decision"] == "approve"
    # Write matches no group
    assert cc.fire("PreToolUse", {"tool_name": "Write", "tool_input": {}})["results"] == []


def test_documented_user_prompt_submit(cc: Workspace) -> None:
    documented(cc)
    out = cc.fire("UserPromptSubmit", {"prompt": "Write a function to calculate the "
                                                 "factorial of a number"})
    assert not out["blocked"] and out["additionalContext"].startswith("Current time: 20")
    out = cc.fire("UserPromptSubmit", {"prompt": "my password: hunter2, deploy it"})
    assert out["blocked"] and out["additionalContext"] is None
    assert out["reason"] == ("Security policy violation: Prompt contains potential secrets. "
                             "Please rephrase your request without sensitive information.")


def test_documented_session_start_reminder_after_compaction(cc: Workspace) -> None:
    documented(cc)
    out = cc.fire("SessionStart", {"source": "compact"})
    assert out["additionalContext"] == ("Reminder: use Bun, not npm. Run bun test before "
                                        "committing. Current sprint: auth refactor.")
    assert cc.fire("SessionStart", {"source": "startup"})["results"] == []
    assert cc.fire("session_start", {})["results"] == []  # no source: a matcher matches none


# --- what initd gives the hooks


def test_stdin_and_environment_are_claude_codes(cc: Workspace) -> None:
    settings(cc, on("PreToolUse", 'cat > "$CLAUDE_PROJECT_DIR/in.json"; '
                    'printf "%s\\n%s" "$CLAUDE_PROJECT_DIR" "$(pwd)" > env.txt',
                    matcher="Bash"))
    cc.fire("PreToolUse", {**bash("npm test"), "transcript_path": "/t.jsonl",
                           "permission_mode": "default", "tool_use_id": "toolu_01"})
    got = json.loads((cc.path / "in.json").read_text())
    assert got == {"session_id": cc.sid, "cwd": str(cc.path), "hook_event_name": "PreToolUse",
                   "tool_name": "Bash", "tool_input": {"command": "npm test"},
                   "transcript_path": "/t.jsonl", "permission_mode": "default",
                   "tool_use_id": "toolu_01"}
    assert (cc.path / "env.txt").read_text().splitlines() == [str(cc.path)] * 2
    # what the agent sends wins: its own session, cwd, event name; initd's name works too
    cc.fire("pre_tool_use", {**bash("ls"), "session_id": "abc123", "cwd": "/elsewhere"})
    got = json.loads((cc.path / "in.json").read_text())
    assert (got["session_id"], got["cwd"], got["hook_event_name"]) == (
        "abc123", "/elsewhere", "PreToolUse")


def test_a_huge_tool_input_still_reaches_the_hook(cc: Workspace) -> None:
    """A Write of a 1 MiB file: the payload is on stdin only (an environment variable that
    big could not be exec'd, and the guard would silently not run)."""
    settings(cc, on("PreToolUse", "python3 -c 'import json,sys; d=json.load(sys.stdin); "
                    "print(len(d[\"tool_input\"][\"content\"]))' >&2; env > env.txt; exit 2",
                    matcher="Write"))
    out = cc.fire("PreToolUse", {"tool_name": "Write", "tool_input": {
        "file_path": "/ws/big.txt", "content": "x" * 2**20}})
    assert out["blocked"] and out["reason"] == str(2**20)
    env = (cc.path / "env.txt").read_text()
    assert "TOOL_INPUT=" not in env and "TOOL_NAME=" not in env
    assert f"SESSION={cc.sid}" in env.splitlines() and "EVENT=pre_tool" in env.splitlines()


def test_commands_run_as_written_by_sh_or_bash(cc: Workspace) -> None:
    """No initd placeholders in Claude Code's commands: ${X} and {file} are the shell's."""
    settings(cc, {"Notification": [{"hooks": [
        {"type": "command", "command": "X=sh; echo \"${X}-{file}-{{x}}\""},
        {"type": "command", "command": "[[ -n $BASH_VERSION ]] && echo bash", "shell": "bash"},
    ]}]})
    out = cc.fire("Notification", {"message": "hi", "file": "a.py", "x": "no"})
    assert [r["stdout"] for r in out["results"]] == ["sh-{file}-{{x}}\n", "bash\n"]


# --- each output field


def test_exit_codes_per_event(cc: Workspace) -> None:
    settings(cc, {**on("PostToolUse", "echo 'lint: 2 errors' >&2; exit 2", matcher="Edit|Write"),
                  **on("Notification", "echo 'for the user' >&2; exit 2"),
                  **on("SessionEnd", "exit 1"),
                  **on("Stop", "echo 'tests fail' >&2; exit 2")})
    out = cc.fire("PostToolUse", {"tool_name": "Edit", "tool_input": {}, "tool_response": {}})
    assert (out["blocked"], out["feedback"]) == (False, "lint: 2 errors")  # already ran
    assert cc.fire("PostToolUse", {"tool_name": "Read"})["results"] == []
    out = cc.fire("Notification", {"message": "Claude needs your permission"})
    assert not out["blocked"] and out["feedback"] is None
    assert out["results"][0]["error"] == ("exit 2, but notification cannot be blocked: "
                                          "stderr is for the user only")
    out = cc.fire("SessionEnd", {"reason": "other"})
    assert not out["blocked"] and out["results"][0]["status"] == "failed"
    out = cc.fire("Stop", {})
    assert out["blocked"] and out["reason"] == "tests fail"


def test_documented_json_outputs(cc: Workspace) -> None:
    settings(cc, {
        **on("PostToolUse", prints({
            "decision": "block", "reason": "Explanation for decision",
            "hookSpecificOutput": {"hookEventName": "PostToolUse",
                                   "additionalContext": "Additional information for Claude"}}),
            matcher="Write|Edit"),
        **on("PreToolUse", prints({"continue": False,
                                   "stopReason": "Build failed, fix errors before continuing"}),
             prints({"systemMessage": "careful", "hookSpecificOutput": {
                 "hookEventName": "PreToolUse", "permissionDecision": "ask",
                 "permissionDecisionReason": "My reason here",
                 "updatedInput": {"command": "npm run lint"},
                 "additionalContext": "Current environment: production."}}),
             matcher="Bash"),
        **on("SessionStart", prints({"hookSpecificOutput": {
            "hookEventName": "SessionStart", "additionalContext": "My additional context"}}),
            "echo plain text is context too")})
    out = cc.fire("PostToolUse", {"tool_name": "Write", "tool_input": {"file_path": "a"}})
    assert (out["blocked"], out["feedback"], out["additionalContext"]) == (
        False, "Explanation for decision", "Additional information for Claude")
    out = cc.fire("PreToolUse", bash("npm run lint:fix"))
    assert (out["continue"], out["stopReason"], out["permissionDecision"], out["reason"],
            out["systemMessage"], out["updatedInput"], out["additionalContext"],
            out["blocked"]) == (
        False, "Build failed, fix errors before continuing", "ask", "My reason here",
        "careful", {"command": "npm run lint"}, "Current environment: production.", False)
    out = cc.fire("SessionStart", {"source": "startup"})
    assert out["additionalContext"] == "My additional context\nplain text is context too"


def test_every_claude_hook_runs_and_deny_wins(cc: Workspace) -> None:
    """Claude Code runs all of an event's matching hooks: a deny does not stop the others;
    deny wins over ask over allow; reasons are joined."""
    decide = ("cat >/dev/null; echo '{\"hookSpecificOutput\": {\"hookEventName\": "
              "\"PreToolUse\", \"permissionDecision\": \"%s\", "
              "\"permissionDecisionReason\": \"%s\"}}'")
    settings(cc, on("PreToolUse", decide % ("allow", "fine"), decide % ("ask", "hmm"),
                    decide % ("deny", "no"), "echo 'also no' >&2; exit 2",
                    "cat > after.json", matcher="*"))
    out = cc.fire("PreToolUse", bash("ls"))
    assert (out["blocked"], out["permissionDecision"], out["reason"]) == (
        True, "deny", "no\nalso no")
    assert json.loads((cc.path / "after.json").read_text())["tool_name"] == "Bash"
    settings(cc, on("PreToolUse", decide % ("allow", "fine"), decide % ("ask", "hmm"),
                    matcher="*"))
    out = cc.fire("PreToolUse", bash("ls"))
    assert (out["blocked"], out["permissionDecision"], out["reason"]) == (False, "ask", "hmm")


def test_identical_commands_run_once(cc: Workspace) -> None:
    """The same command in the user's and the project's settings, and under two matchers
    that both match: once. Under a matcher that does not match, it is not counted."""
    count = "echo x >> \"$CLAUDE_PROJECT_DIR/count\""
    (Path(cc.home or "") / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": on("PreToolUse", count, matcher="Read")}))
    settings(cc, {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                                                               "command": count}]},
                                 {"matcher": "*", "hooks": [{"type": "command",
                                                            "command": count}]}]})
    out = cc.fire("PreToolUse", bash("ls"))
    assert (cc.path / "count").read_text() == "x\n" and len(out["results"]) == 1
    assert out["results"][0]["hook"].endswith("settings.json: hooks.PreToolUse[0].hooks[0]")


def test_async_hooks_run_in_the_background(cc: Workspace) -> None:
    settings(cc, on("PostToolUse", "sleep 0.3; touch done", matcher="*", **{"async": True}))
    out = cc.fire("PostToolUse", {"tool_name": "Bash"})
    assert out["results"][0]["status"] == "started" and not (cc.path / "done").exists()
    from tests.support.harness import wait_for
    wait_for(lambda: (cc.path / "done").exists(), what="the async hook")


# --- the Stop loop


STOP_HOOK = ("cat >> \"$CLAUDE_PROJECT_DIR/stops\"; echo >> \"$CLAUDE_PROJECT_DIR/stops\"; "
             "printf '%s' '{\"decision\": \"block\", \"reason\": \"Reason Claude should "
             "continue\"}'")


def active(ws: Workspace) -> list[object]:
    """stop_hook_active as each Stop hook read it on stdin (None: not there; it always is,
    as every field the reference says an event sends: issue 26)."""
    lines = (ws.path / "stops").read_text().splitlines()
    return [json.loads(line).get("stop_hook_active") for line in lines]


def test_stop_blocks_until_the_cap(cc: Workspace) -> None:
    """The cap is Claude Code's: its hooks reference (code.claude.com/docs/en/hooks, Stop)
    reads "Claude Code overrides the hook and ends the turn after 8 consecutive blocks"
    (since 2.1.143: anthropics/claude-code#59583, #85547). A lower cap would let a Stop
    through that the user's Stop hook may still block."""
    assert CAP == 8
    settings(cc, on("Stop", STOP_HOOK))
    outs = [cc.fire("Stop", {}) for _ in range(10)]
    assert [o["blocked"] for o in outs] == [True] * 8 + [False, True]
    assert outs[0]["reason"] == "Reason Claude should continue"
    assert outs[8]["results"][0]["error"] == (
        "not blocked: 8 stop events in a row were blocked (the loop cap is 8), so this one "
        "goes through")
    assert outs[8]["results"][0]["status"] == "ok"
    assert active(cc) == [False] + [True] * 8 + [False]


def test_a_user_prompt_or_an_unblocked_stop_resets_the_count(cc: Workspace) -> None:
    settings(cc, {**on("Stop", STOP_HOOK), **on("SubagentStop", STOP_HOOK)})
    cc.fire("Stop", {})
    cc.fire("Stop", {})
    cc.fire("SubagentStop", {})  # its own count
    cc.fire("UserPromptSubmit", {"prompt": "go on"})
    cc.fire("Stop", {})
    cc.fire("Stop", {"stop_hook_active": False})  # what the agent says is passed through
    assert active(cc) == [False, True, False, False, False]
    settings(cc, on("Stop", "cat >> \"$CLAUDE_PROJECT_DIR/stops\"; "
                            "echo >> \"$CLAUDE_PROJECT_DIR/stops\""))
    assert not cc.fire("Stop", {})["blocked"]
    assert not cc.fire("Stop", {})["blocked"]
    assert active(cc)[-2:] == [True, False]


def test_the_count_survives_a_restart_and_garbage_reads_as_zero(cc: Workspace) -> None:
    settings(cc, on("Stop", STOP_HOOK))
    for _ in range(5):
        cc.fire("Stop", {})
    assert cc.engine is not None
    state = Path(cc.engine.ctx.state_dir) / "stop-loop.steps"
    last = json.loads(state.read_text().splitlines()[-1])
    assert (last["step"], last["value"], last["state"]) == (
        "stop", True, {"stop": 5, "subagent_stop": 0})
    cc.engine.shutdown()
    cc.engine = None  # a new engine, as a restarted hook service makes
    assert [cc.fire("Stop", {})["blocked"] for _ in range(3)] == [True, True, True]
    assert not cc.fire("Stop", {})["blocked"]  # the 9th: the cap, counted across
    for garbage in ("{nope", '{"state": {"stop": "many"}}', '{"state": {"stop": -5}}',
                    "[3]", '{"state": {"stop": true}}', '{"state": 7}'):
        cc.engine.shutdown()
        cc.engine = None
        state.write_text(garbage + "\n")
        out = cc.fire("Stop", {})
        assert out["blocked"] and active(cc)[-1] is False, garbage


def test_the_cap_holds_for_every_format_but_only_claude_reads_the_flag(cc: Workspace) -> None:
    cc.script("stop.sh", "stop", 'cat > "$WORKSPACE/discobot-stdin"; echo no >&2; exit 2')
    outs = [cc.fire("Stop", {}) for _ in range(CAP + 1)]
    assert [o["blocked"] for o in outs] == [True] * CAP + [False]
    stdin = json.loads((cc.path / "discobot-stdin").read_text())
    assert "stop_hook_active" not in stdin and stdin["event"] == "stop"


def test_continue_false_wins_over_a_stop_block(cc: Workspace) -> None:
    settings(cc, on("Stop", STOP_HOOK, prints({"continue": False, "stopReason": "done"})))
    out = cc.fire("Stop", {})
    assert (out["blocked"], out["continue"], out["stopReason"]) == (False, False, "done")
    assert out["results"][0]["status"] == "ok"
    assert "continue: false" in out["results"][0]["error"]
    assert cc.fire("Stop", {})["blocked"] is False  # and nothing was counted
    assert active(cc) == [False, False]


# --- trust


def test_trust_approves_workspace_files_and_refuses_the_unapproved(cc: Workspace,
                                                                  tmp_path: Path) -> None:
    home = Path(cc.home or "")
    (home / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": on("PreToolUse", "touch \"$CLAUDE_PROJECT_DIR/user-ran\"", matcher="*")}))
    settings(cc, on("PreToolUse", "touch project-ran; exit 2", matcher="Bash"))
    settings(cc, on("PreToolUse", "touch local-ran", matcher="Bash"), "settings.local.json")
    trust_file = tmp_path / "trust.json"
    ctx = hook_context(cc.path, cc.sid)
    ctx = ctx._replace(agent=ctx.agent._replace(home=str(home)), trust=Trust(
        str(trust_file), enforce=True, image_dir=str(cc.path / "no-image")))
    cc.engine = wiring.for_context(ctx, str(cc.path / "no-image"))
    out = cc.fire("PreToolUse", bash("ls"))
    assert not out["blocked"]  # an unapproved hook is an error, not a "no"
    assert [(r["status"], "not trusted yet" in (r["error"] or "")) for r in out["results"]] == [
        ("ok", False), ("untrusted", True), ("untrusted", True)]
    assert (cc.path / "user-ran").exists() and not (cc.path / "project-ran").exists()
    approved = subprocess.run(
        [*INITD, "hooks", "trust", "--workspace", str(cc.path), "--hooks-dir",
         str(cc.path / "no-image"), "--trust-file", str(trust_file)],
        capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(home)})
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.count("new") == 2 and "user-ran" not in approved.stdout
    out = cc.fire("PreToolUse", bash("ls"))
    assert out["blocked"] and (cc.path / "project-ran").exists()
    # a matcher changed since (in effect at the service's next start): refused again
    settings(cc, on("PreToolUse", "touch project-ran; exit 2", matcher="*"))
    cc.engine = wiring.for_context(ctx, str(cc.path / "no-image"))
    out = cc.fire("PreToolUse", bash("ls"))
    assert "changed since it was trusted" in out["results"][1]["error"]


# --- listing, checking


def test_hooks_list_and_check(cc: Workspace) -> None:
    documented(cc)
    env = {**os.environ, "HOME": cc.home or ""}
    args = ["--workspace", str(cc.path), "--hooks-dir", str(cc.path / "no-image")]
    listed = subprocess.run([*INITD, "hooks", "list", "--json", *args], capture_output=True,
                            text=True, timeout=60, env=env)
    hooks = json.loads(listed.stdout)["events"]
    assert [(h["dialect"], h["event"], h["action"]) for h in hooks][:2] == [
        ("claude", "session_start", "command"), ("claude", "user_prompt_submit", "command")]
    assert hooks[4]["matcher"] == {"text": "Bash", "field": "tool_name", "names": ["Bash"],
                                   "regex": None, "rule": "Bash(rm *)",
                                   "root": str(cc.path), "home": cc.home}
    table = subprocess.run([*INITD, "hooks", "list", *args], capture_output=True, text=True,
                           timeout=60, env=env).stdout
    row = next(line for line in table.splitlines() if "hooks.PreToolUse[0].hooks[2]" in line)
    assert row.split()[:3] == ["pre_tool", "claude", "command"]
    assert subprocess.run([*INITD, "hooks", "check", *args], capture_output=True,
                          timeout=60, env=env).returncode == 0
    settings(cc, on("PreToolUse", "x", matcher="(?=a)b"), "settings.local.json")
    checked = subprocess.run([*INITD, "hooks", "check", *args], capture_output=True,
                             text=True, timeout=60, env=env)
    assert checked.returncode == 1
    assert (f"{cc.path}/.claude/settings.local.json: hooks.PreToolUse[0].matcher: '(?=a)b': "
            "not a regular expression RE2 can run") in checked.stdout


# --- end to end: a real hook service


@pytest.fixture
def service(cc: Workspace, tmp_path: Path) -> Iterator[tuple[str, Workspace]]:
    """``initd service`` over the workspace, as the agent user (here: the tests' own), with
    the agent's home (its ~/.claude, its ~/.discobot) in tmp_path."""
    sid = f"cc-{uuid.uuid4().hex[:8]}"
    sock = str(tmp_path / "initd.sock")
    env = {**os.environ, "HOME": cc.home or ""}
    argv = [*INITD, "service", "--socket", sock, "--workspace", str(cc.path), "--session-id",
            sid, "--hooks-dir", str(cc.path / "no-image")]
    started: list[subprocess.Popen[str]] = []

    def start() -> None:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env)
        started.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().startswith("ready")

    def stop() -> None:
        started[-1].send_signal(signal.SIGTERM)
        started[-1].wait(10)

    start()
    cc.restart = lambda: (stop(), start())  # type: ignore[attr-defined]
    yield sock, cc
    stop()
    forget_session(sid, cc.home or "")


def emit(sock: str, event: str, data: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*INITD, "emit", event, "--data", json.dumps(data)],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "INITD_SOCKET": sock})


@pytest.mark.slow
def test_end_to_end_emit_and_the_api(service: tuple[str, Workspace]) -> None:
    sock, cc = service
    documented(cc)
    # (PostToolUse's continue: false stops the agent; Notification's is discarded: the
    # reference's "Notification ... no decision control", Claude Code 2.1.x)
    settings(cc, {**on("PostToolUse", prints({"continue": False, "stopReason": "Build failed"})),
                  **on("Notification", prints({"continue": False, "stopReason": "ignored"})),
                  **on("Stop", STOP_HOOK)}, "settings.local.json")
    cc.restart()  # type: ignore[attr-defined]  # (its hooks: a snapshot taken at its start)
    denied = emit(sock, "PreToolUse", bash("rm -rf /"))
    assert denied.returncode == 2, denied.stderr
    assert denied.stderr == "initd: blocked: Destructive command blocked by hook\n"
    assert json.loads(denied.stdout)["permissionDecision"] == "deny"
    # the agent posts Claude Code's own event JSON, under Claude Code's name
    code, out = call(sock, "POST", "/v1/events/PreToolUse", {
        "session_id": "abc123", "transcript_path": "/t.jsonl", "cwd": str(cc.path),
        "permission_mode": "default", "hook_event_name": "PreToolUse", **bash("grep -r x .")})
    assert code == 200 and out["event"] == "pre_tool" and out["blocked"]
    assert out["reason"].startswith("• Use 'rg' (ripgrep)")
    prompt = emit(sock, "UserPromptSubmit", {"prompt": "hello"})
    assert prompt.returncode == 0
    assert json.loads(prompt.stdout)["additionalContext"].startswith("Current time:")
    stopped = emit(sock, "PostToolUse", {**bash("make"), "tool_response": {}})
    assert stopped.returncode == 3 and stopped.stderr == "initd: stop: Build failed\n"
    told = emit(sock, "Notification", {"message": "idle", "notification_type": "idle"})
    assert told.returncode == 0, told.stderr
    # the Stop loop's count outlives the service (the cap: 8 in a row, as Claude Code's)
    assert [emit(sock, "Stop", {}).returncode for _ in range(4)] == [2, 2, 2, 2]
    cc.restart()  # type: ignore[attr-defined]
    assert [emit(sock, "Stop", {}).returncode for _ in range(5)] == [2, 2, 2, 2, 0]
    assert active(cc) == [False] + [True] * 8


@pytest.mark.slow
def test_outcomes_conform_to_the_openapi_document(cc: Workspace) -> None:
    import schemathesis

    from initd.service.app import make_app
    from initd.service.core import HookService

    documented(cc)
    settings(cc, {**on("Stop", prints({"continue": False, "stopReason": "x"})),
                  **on("PostToolUse", "echo fix it >&2; exit 2", matcher="*")},
             "settings.local.json")
    ctx = hook_context(cc.path, cc.sid)
    service = HookService(ctx._replace(agent=ctx.agent._replace(home=cc.home or "")),
                          str(cc.path / "no-image"))
    schema = schemathesis.openapi.from_wsgi("/v1/openapi.json", make_app(service))
    [operation] = [r.ok() for r in schema.get_all_operations()
                   if r.ok().label == "POST /v1/events/{event}"]
    for event, body in (("PreToolUse", bash("rm -rf /x")), ("UserPromptSubmit", {"prompt": "x"}),
                        ("Stop", {}), ("PostToolUse", {"tool_name": "Edit"}),
                        ("PreToolUse", {"tool_name": "Read",
                                        "tool_input": {"file_path": "a.md"}})):
        case = operation.Case(path_parameters={"event": event}, body=body)
        response = case.call()
        case.validate_response(response)
        assert response.status_code == 200
    service.close()


# --- a settings file that is wrong, or hostile


def test_problems_name_the_file_and_key_and_the_rest_loads(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    path = ws / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    home.mkdir()
    path.write_text(json.dumps({"hooks": {
        "PreToolUsee": [{"hooks": [{"type": "command", "command": "x"}]}],
        "BeforeTool": [{"hooks": [{"type": "command", "command": "x"}]}],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "command", "command": "good one"},
                {"type": "prompt", "prompt": "Is this safe? $ARGUMENTS"},
                {"type": "command", "command": "x", "timeout": "30s"},
                {"type": "command", "command": "x", "timeout": 1e12},
                {"type": "command", "command": "x", "timeout": 0},
                {"type": "command"},
                {"type": "command", "command": "x", "if": "Agent(Explore)"},
                {"type": "command", "command": "x", "shell": "powershell"},
                "echo not an object"]},
            {"matcher": "(?=a)b", "hooks": [{"type": "command", "command": "x"}]},
            {"matcher": "[", "hooks": [{"type": "command", "command": "x"}]},
            {"matcher": "Bash"},
            {"matcher": "Read", "hooks": [{"type": "command", "command": "good two",
                                            "statusMessage": "checking", "colour": "red"}]}],
        "Stop": {"hooks": []},
        "UserPromptSubmit": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "good three", "if": "Bash"}]}]}}))
    found = claude.load(str(ws), str(home), str(tmp_path / "no-managed.json"))
    assert [h.label for h in found.hooks] == ["good one", "good two", "good three"]
    p, h = str(path), "hooks.PreToolUse[0].hooks"
    errors = [p.text for p in found.problems if p.severity == "error"]
    served = ", ".join(claude.EVENTS)
    assert errors == [
        f"{p}: hooks.PreToolUsee: unknown Claude Code hook event 'PreToolUsee' (Claude "
        f"Code's: {served})",
        f"{p}: hooks.BeforeTool: unknown Claude Code hook event 'BeforeTool' "
        f"(Claude Code's: {served})",
        f"{p}: {h}[1].type: a 'prompt' hook asks Claude Code's model, which initd does not "
        "have: this gate will not gate. It stands in on PreToolUse as an error (which "
        "blocks a blockable event) until it is a \"command\" or \"http\" hook",
        f"{p}: {h}[2].timeout: expected a number > 0, got '30s'",
        f"{p}: {h}[3].timeout: 1e+12 seconds: at most 86400 (a day); Claude Code's timeout "
        "is in seconds, not milliseconds",
        f"{p}: {h}[4].timeout: expected a number > 0, got 0",
        f"{p}: {h}[5].command: required",
        f"{p}: {h}[6].if: 'Agent(Explore)': initd evaluates Agent(...) only for Bash, the "
        "file tools (Read, Edit, Write, MultiEdit, NotebookEdit, Glob, Grep) and "
        "WebFetch(domain:...); write Agent alone to match every use",
        f"{p}: {h}[7].shell: expected one of bash, sh, got 'powershell'",
        f"{p}: {h}[8]: expected a mapping of fields, got str 'echo not an object'",
        f"{p}: hooks.PreToolUse[1].matcher: '(?=a)b': not a regular expression RE2 can run "
        "(invalid perl operator: (?=): initd runs matchers in linear time, without "
        "lookarounds or backreferences",
        f"{p}: hooks.PreToolUse[2].matcher: '[': not a regular expression RE2 can run "
        "(missing ]: [): initd runs matchers in linear time, without lookarounds or "
        "backreferences",
        f"{p}: hooks.PreToolUse[3].hooks: expected a list of hooks ([{{\"type\": "
        "\"command\", \"command\": ...}])",
        f"{p}: hooks.Stop: expected a list of matcher groups ([{{\"matcher\": ..., "
        "\"hooks\": [...]}])"]
    warnings = [p.text for p in found.problems if p.severity == "warning"]
    assert warnings == [
        f"{p}: hooks.PreToolUse[4].hooks[0]: unknown key 'colour' ignored",
        f"{p}: hooks.UserPromptSubmit[0].matcher: UserPromptSubmit has no matcher: ignored "
        "(every occurrence runs these hooks)",
        f"{p}: hooks.UserPromptSubmit[0].hooks[0].if: UserPromptSubmit is not a tool event: "
        "this hook never runs (as in Claude Code)"]


@pytest.mark.parametrize(("managed", "user", "project", "runs"), [
    ({}, {}, {}, ["managed", "user", "project", "local"]),
    ({"allowManagedHooksOnly": True}, {}, {}, ["managed"]),
    ({"disableAllHooks": True}, {}, {}, []),
    ({}, {"disableAllHooks": True}, {}, ["managed"]),
    ({}, {}, {"disableAllHooks": True}, ["managed", "user"]),  # not the user's hooks
    ({}, {"disableAllHooks": False}, {}, ["managed", "user", "project", "local"]),
    # issue 36: the user's own true turns off the user's hooks, whatever the project says
    ({}, {"disableAllHooks": True}, {"disableAllHooks": True}, ["managed"]),
    ({}, {"disableAllHooks": True}, {"disableAllHooks": False}, ["managed", "project", "local"]),
    # the managed false is the value left after precedence: every hook runs
    ({"disableAllHooks": False}, {"disableAllHooks": True}, {},
     ["managed", "user", "project", "local"]),
])
def test_files_their_order_scope_and_policy(tmp_path: Path, managed: dict[str, Any],
                                            user: dict[str, Any], project: dict[str, Any],
                                            runs: list[str]) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    paths = {"managed": tmp_path / "etc" / "managed-settings.json",
             "user": home / ".claude" / "settings.json",
             "project": ws / ".claude" / "settings.json",
             "local": ws / ".claude" / "settings.local.json"}
    more = {"managed": managed, "user": user, "project": project, "local": {}}
    for scope, path in paths.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**more[scope], "hooks": on("Stop", scope)}))
    found = claude.load(str(ws), str(home), str(paths["managed"]))
    assert [(h.label, h.workspace, h.timeout) for h in found.hooks] == [
        (scope, scope in ("project", "local"), 600.0) for scope in runs]
    assert len(found.problems) == 4 - len(runs)  # a warning for each file not run
    assert all("not run (disableAllHooks or allowManagedHooksOnly)" in p.text
               for p in found.problems)


HOSTILE = ["symlink to a root-only file", "fifo", "5 MB", "invalid JSON", "a list",
           "hooks is a list", "hooks is text"]


def plant(path: Path, kind: str, secret: Path) -> str:
    """Make ``path`` what ``kind`` says; the problem initd must report about it."""
    if kind == "symlink to a root-only file":
        os.symlink(secret, path)
        return f"{path}: not valid JSON: Expecting value: line 1 column 1 (char 0)"
    if kind == "fifo":
        os.mkfifo(path)
        return f"{path}: not a regular file: not read"
    if kind == "5 MB":
        path.write_text(json.dumps({"hooks": {}, "pad": "x" * 5_000_000}))
        return f"{path}: over {2**20} bytes: not read"
    text = {"invalid JSON": '{"hooks": {"Stop": [}', "a list": "[1, 2]",
            "hooks is a list": '{"hooks": ["Stop"]}', "hooks is text": '{"hooks": "Stop"}'}
    path.write_text(text[kind])
    return {"invalid JSON": f"{path}: not valid JSON: Expecting value: line 1 column 21 "
                            "(char 20)",
            "a list": f"{path}: expected a JSON object (Claude Code's settings), got [1, 2]",
            "hooks is a list": f"{path}: hooks: expected a mapping of event name: [matcher "
                               "groups], got ['Stop']",
            "hooks is text": f"{path}: hooks: expected a mapping of event name: [matcher "
                             "groups], got 'Stop'"}[kind]


@pytest.mark.timeout(30)  # a FIFO must not hang anything
@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_settings_file_is_a_problem_and_the_other_hooks_run(
        cc: Workspace, tmp_path: Path, kind: str) -> None:
    secret = tmp_path / "root-only"
    secret.write_text("root:$6$SECRET-TOKEN:19000:0:99999:7:::\n")
    secret.chmod(0o600)
    (Path(cc.home or "") / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": on("PreToolUse", "touch \"$CLAUDE_PROJECT_DIR/user-ran\"")}))
    settings(cc, on("PreToolUse", "touch local-ran"), "settings.local.json")
    path = cc.path / ".claude" / "settings.json"
    expected = plant(path, kind, secret)
    out = cc.fire("PreToolUse", bash("ls"))
    assert (cc.path / "user-ran").exists() and (cc.path / "local-ran").exists()
    # (was: 2 results. A file initd cannot read may hold a guard: after the other hooks,
    # it stands in as an error that blocks the blockable PreToolUse: invariant 12)
    assert len(out["results"]) == 3
    assert out["results"][2]["status"] == "blocked" and out["blocked"]
    assert out["results"][2]["error"] == expected
    assert cc.engine is not None
    problems = [p.text for p in cc.engine.cache.get().problems]
    assert problems == [expected]
    assert "SECRET-TOKEN" not in json.dumps(problems)


def test_the_agent_cannot_read_a_root_only_file_through_a_link(agent_user: Any,
                                                               tmp_path: Path) -> None:
    """As the hook service reads it (the agent user): a link to a root-only file is a
    problem naming the file, nothing of the file is shown, the other hooks load."""
    base = Path(subprocess.run(["mktemp", "-d"], capture_output=True, text=True,
                               check=True).stdout.strip())
    try:
        base.chmod(0o755)
        ws = git_repo(base / "ws")
        (ws / ".claude").mkdir()
        secret = tmp_path / "root-only.json"
        secret.write_text(json.dumps({"hooks": on("Stop", "echo SECRET-TOKEN")}))
        secret.chmod(0o600)
        os.symlink(secret, ws / ".claude" / "settings.json")
        (ws / ".claude" / "settings.local.json").write_text(json.dumps(
            {"hooks": on("Stop", "echo fine")}))
        subprocess.run(["chown", "-R", f"{agent_user.pw_uid}:{agent_user.pw_gid}", str(ws)],
                       check=True)
        out = subprocess.run(
            ["runuser", "-u", agent_user.pw_name, "--", *INITD, "hooks", "list",
             "--workspace", str(ws), "--hooks-dir", str(base / "no-image")],
            capture_output=True, text=True, timeout=60, cwd="/",
            env={**os.environ, "HOME": agent_user.pw_dir})
        assert out.returncode == 0, out.stderr
        assert "echo fine" in out.stdout and "SECRET-TOKEN" not in out.stdout + out.stderr
        assert (f"error: {ws}/.claude/settings.json: cannot read: [Errno 13] Permission "
                "denied") in out.stdout
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_without_bash_commands_run_with_sh_and_one_warning_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference's default shell is bash; an image without it runs sh, and says so
    once at load, however many hooks there are (issue 26)."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": {**on("Stop", "a", "b"), **on("PreToolUse", "c", shell="bash")}}))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # a PATH with no bash on it
    found = claude.load(str(ws), str(home), str(tmp_path / "no-managed.json"))
    assert [h.spec.shell for h in found.hooks] == ["sh", "sh", "bash"]  # type: ignore[union-attr]
    assert [p.text for p in found.problems] == [claude.NO_BASH]
    monkeypatch.undo()
    found = claude.load(str(ws), str(home), str(tmp_path / "no-managed.json"))
    assert [h.spec.shell for h in found.hooks] == ["bash", "bash", "bash"]  # type: ignore[union-attr]
    assert found.problems == []
