"""Claude Code hooks in Cursor, and Cursor's row of issue 37's guard matrix.

THIRD = https://cursor.com/docs/reference/third-party-hooks (revision of 2026-08-24):
"Cursor can load and execute hooks configured for Claude Code", from
`.claude/settings.local.json`, `.claude/settings.json` and `~/.claude/settings.json`, with
Claude's event and tool names mapped to Cursor's. Issue 37: "A hook gets on stdin the
payload in ITS OWN agent's shape ... and its exit code/stdout are read by its own agent's
rules", and the same three guards, "written once as a Claude Code project hook", must give
Cursor's own "blocked" answer for Cursor's real payloads.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import (
    INITD,
    Session,
    command,
    group,
    hooks,
    q,
    session_fixture,
)
from tests.conformance.cursor_hooks_answers import read_answer
from tests.conformance.cursor_hooks_support import (
    deny_if,
    emit_from,
    entry,
    hooks_json,
    payload,
    project,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cs(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def env_guard(cs: Session) -> str:
    """Exits 2 when the Claude payload's tool_input.file_path ends with `.env`."""
    check = ("import json,sys; d=json.load(sys.stdin); "
             "sys.exit(2 if str(d.get('tool_input',{}).get('file_path','')).endswith('.env') "
             "else 0)")
    saved = cs.out / "env-guard.json"
    return (f"tee {q(saved)} | python3 -c {q(check)} "
            f"|| {{ echo 'no writes to .env' >&2; exit 2; }}")


def the_three_guards(cs: Session) -> None:
    """Issue 37's guard matrix: `.claude/settings.json` PreToolUse, matcher Bash with
    ``if: "Bash(rm *)"`` (deny by exit 2), matcher Bash with ``if: "Bash(git push *)"``,
    matcher `Write|Edit` exiting 2 for a `.env` path."""
    cs.project(hooks(PreToolUse=[
        group(command(f"{cs.record('rm')}; echo 'rm is not allowed' >&2; exit 2",
                      **{"if": "Bash(rm *)"}), matcher="Bash"),
        group(command(f"{cs.record('push')}; echo 'no pushes' >&2; exit 2",
                      **{"if": "Bash(git push *)"}), matcher="Bash"),
        group(command(env_guard(cs)), matcher="Write|Edit")]))


def shell(cs: Session, event: str, line: str) -> dict[str, Any]:
    """Cursor's payload for the shell command ``line``: beforeShellExecution's
    ``command``/``cwd``, or preToolUse's Shell tool."""
    if event == "beforeShellExecution":
        return payload(event, cs, command=line)
    return payload(event, cs, tool_input={"command": line, "working_directory": str(cs.ws)})


@pytest.mark.parametrize("event", ["beforeShellExecution", "preToolUse"])
@pytest.mark.parametrize(("line", "guard"), [("rm -rf /tmp/x", "rm"),
                                             ("git push --force origin main", "push")])
def test_guard_matrix_shell(cs: Session, event: str, line: str, guard: str) -> None:
    """THIRD "Hook Step Mapping": "`PreToolUse` | `preToolUse`"; "Tool Name Mapping":
    "`Bash` | `Shell` | Yes"; "Exit code 2: Block the action (equivalent to
    `permission: "deny"`)". HOOKS: beforeShellExecution is Cursor's "Control shell
    commands" hook (its input: "command": "<full terminal command>"). The Claude guard
    sees Claude's own payload (tool_name Bash) and Cursor gets its blocked answer."""
    the_three_guards(cs)
    cs.start()
    answer = read_answer(event, emit_from(cs, shell(cs, event, line)))
    assert answer.blocked, answer.describe()
    seen = cs.seen(guard)
    assert seen["hook_event_name"] == "PreToolUse" and seen["tool_name"] == "Bash"
    assert seen["tool_input"]["command"] == line


def test_guard_matrix_env_write(cs: Session) -> None:
    """THIRD "Tool Name Mapping": "`Write` | `Write`", "`Edit` | `Write`": Cursor's Write
    tool is what a Claude `Write|Edit` matcher guards. Cursor's preToolUse for a write of
    `.env` (the file's path in ``file_path``, the name Cursor's file events use) is
    blocked by the Claude guard that reads tool_input.file_path."""
    the_three_guards(cs)
    cs.start()
    sent = payload("preToolUse", cs, tool_name="Write",
                   tool_input={"file_path": f"{cs.ws}/.env", "contents": "TOKEN=x\n"})
    answer = read_answer("preToolUse", emit_from(cs, sent))
    assert answer.blocked, answer.describe()
    assert cs.seen("env-guard")["tool_input"]["file_path"] == f"{cs.ws}/.env"


@pytest.mark.parametrize("event", ["beforeShellExecution", "preToolUse"])
def test_guard_matrix_allows_ls(cs: Session, event: str) -> None:
    """The same guards let ``ls`` through: no ``if`` rule matches it ("The hook only
    spawns if the tool call matches the pattern", code.claude.com/docs/en/hooks), and
    Cursor's answer is no block and no failure."""
    the_three_guards(cs)
    cs.start()
    answer = read_answer(event, emit_from(cs, shell(cs, event, "ls")))
    assert not answer.blocked and not answer.failed and not answer.problems, answer.describe()
    assert (cs.runs("rm"), cs.runs("push")) == (0, 0)


MAPPING = [("PreToolUse", "preToolUse"), ("PostToolUse", "postToolUse"),
           ("UserPromptSubmit", "beforeSubmitPrompt"), ("Stop", "stop"),
           ("SubagentStop", "subagentStop"), ("SessionStart", "sessionStart"),
           ("SessionEnd", "sessionEnd"), ("PreCompact", "preCompact")]


@pytest.mark.parametrize(("claude", "cursor"), MAPPING)
@pytest.mark.parametrize("where", ["local", "project", "user"])
def test_claude_hooks_run_for_cursors_events(cs: Session, claude: str, cursor: str,
                                              where: str) -> None:
    """THIRD "Configuration Locations": Claude Code hooks are loaded from
    `.claude/settings.local.json`, `.claude/settings.json`, `~/.claude/settings.json`;
    "Hook Step Mapping": PreToolUse→preToolUse, PostToolUse→postToolUse,
    UserPromptSubmit→beforeSubmitPrompt, Stop→stop, SubagentStop→subagentStop,
    SessionStart→sessionStart, SessionEnd→sessionEnd, PreCompact→preCompact. The Claude
    hook gets Claude's payload (its own hook_event_name)."""
    write = {"local": cs.local, "project": cs.project, "user": cs.user}[where]
    write(hooks(**{claude: group(command(cs.record("claude")))}))
    cs.start()
    emit_from(cs, payload(cursor, cs))
    assert cs.runs("claude") == 1
    assert cs.seen("claude")["hook_event_name"] == claude


def test_a_claude_nested_deny_is_cursors_deny(cs: Session) -> None:
    """THIRD "Response Format Compatibility": "The nested `permissionDecision` maps to
    `permission`, `permissionDecisionReason` maps to `user_message`"."""
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                   "permissionDecision": "deny",
                                   "permissionDecisionReason": "Blocked by policy"}}
    cs.project(hooks(PreToolUse=group(command(f"cat >/dev/null; echo {q(json.dumps(deny))}"),
                                      matcher="Bash")))
    cs.start()
    answer = read_answer("preToolUse", emit_from(cs, payload("preToolUse", cs)))
    assert answer.blocked and answer.says("Blocked by policy"), answer.describe()


def test_a_claude_stop_block_is_a_follow_up(cs: Session) -> None:
    """THIRD: "For `Stop` and `SubagentStop` hooks, a `decision` of `"block"` with a
    `reason` is treated as an automatic follow-up, equivalent to providing
    `followup_message` in the native Cursor format." """
    out = {"decision": "block", "reason": "Tasks incomplete, continue working"}
    cs.project(hooks(Stop=group(command(f"cat >/dev/null; echo {q(json.dumps(out))}"))))
    cs.start()
    answer = read_answer("stop", emit_from(cs, payload("stop", cs)))
    assert answer.followup == "Tasks incomplete, continue working", answer.describe()


@pytest.mark.parametrize(("matcher", "tool", "runs"), [("Bash", "Shell", 1), ("Edit", "Write", 1),
                                                       ("Read", "Shell", 0), ("Gr.*", "Grep", 1)])
def test_claude_matchers_see_mapped_tool_names(cs: Session, matcher: str, tool: str,
                                               runs: int) -> None:
    """THIRD "Additional supported features": "Tool matchers (regex patterns) | Yes";
    "Tool Name Mapping": Bash→Shell, Edit→Write, Read→Read, Grep→Grep."""
    cs.project(hooks(PreToolUse=[group(command(cs.record("m")), matcher=matcher),
                                 group(command(cs.record("all")))]))
    cs.start()
    emit_from(cs, payload("preToolUse", cs, tool_name=tool))
    assert (cs.runs("m"), cs.runs("all")) == (runs, 1)


def claude_blocked(proc: subprocess.CompletedProcess[str]) -> bool:
    """Claude Code's reading of a PreToolUse hook: exit 2, or a JSON deny (nested
    permissionDecision, or the deprecated top-level decision "block")."""
    if proc.returncode == 2:
        return True
    try:
        data = json.loads(proc.stdout or "{}")
    except ValueError:
        return False
    nested = data.get("hookSpecificOutput") or {}
    return bool(nested.get("permissionDecision") == "deny" or data.get("decision") == "block")


def test_a_cursor_guard_holds_for_claudes_bash(cs: Session) -> None:
    """Issue 37: "initd reads that agent's own hook files ... and runs the hooks they
    declare for the events initd is told about, whichever agent sent the event. A hook
    gets on stdin the payload in ITS OWN agent's shape". A `.cursor/hooks.json`
    beforeShellExecution guard sees Cursor's input (``command`` at the top, HOOKS) for
    Claude's PreToolUse Bash, and its deny is Claude's block."""
    project(cs, hooks_json(beforeShellExecution=entry(deny_if(cs, "cursor", "rm -rf", "no rm"))))
    cs.start()
    data = {"session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": str(cs.ws),
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "rm -rf /tmp/x"}, "tool_use_id": "toolu_01"}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INITD_", "CLAUDE_"))}
    env.update({"HOME": str(cs.home), "CLAUDE_PROJECT_DIR": str(cs.ws), "INITD_SOCKET": cs.sock})
    proc = subprocess.run([*INITD, "emit", "--from", "claude"], input=json.dumps(data),
                          capture_output=True, text=True, timeout=100, cwd=str(cs.ws), env=env)
    assert claude_blocked(proc), (proc.returncode, proc.stdout, proc.stderr)
    seen = cs.seen("cursor")
    assert seen["hook_event_name"] == "beforeShellExecution"
    assert seen["command"] == "rm -rf /tmp/x"
