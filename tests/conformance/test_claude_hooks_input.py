"""Claude Code hooks, what a hook gets: the JSON on its stdin, the shell and the
environment it runs in, and which hooks a matcher selects; each case as Claude Code's
public hooks reference states it (claude_hooks_support.HOOKS, the revision of
2026-08-22 unless a case says otherwise), quoted in its docstring.

Written from the reference, not from initd's code: a failing case is a place where initd
does not do what a user's existing Claude Code settings expect.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import (
    PAYLOADS,
    Session,
    command,
    group,
    hooks,
    q,
    session_fixture,
)

pytestmark = pytest.mark.timeout(120)

ALL_EVENTS = list(PAYLOADS)

# The events whose input example in the reference carries `permission_mode`: "Not all
# events receive this field. Check the JSON example in each hook event section." (HOOKS,
# "Common input fields"). SessionStart, SessionEnd, PreCompact and Notification's
# examples have none.
WITH_PERMISSION_MODE = ["PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit",
                        "Stop", "SubagentStop", "TeammateIdle", "TaskCompleted"]
PERMISSION_MODES = {"default", "plan", "acceptEdits", "auto", "dontAsk", "bypassPermissions"}


@pytest.fixture
def cc(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def recording(cc: Session, event: str, name: str = "hook") -> None:
    cc.project(hooks(**{event: group(command(cc.record(name)))}))


# -- the common input fields -------------------------------------------------------------------


@pytest.mark.parametrize("event", ALL_EVENTS)
def test_common_fields_are_always_on_stdin(cc: Session, event: str) -> None:
    """HOOKS, "Common input fields": "Hook events receive these fields as JSON, in addition
    to event-specific fields documented in each hook event section. For command hooks, this
    JSON arrives via stdin." The table: `session_id` "Current session identifier",
    `transcript_path` "Path to conversation JSON", `cwd` "Current working directory when
    the hook is invoked", `hook_event_name` "Name of the event that fired".

    The agent sends only the event's own fields; every hook still gets all four."""
    recording(cc, event)
    cc.start()
    cc.post(event)
    seen = cc.seen("hook")
    missing = [field for field in ("session_id", "transcript_path", "cwd", "hook_event_name")
               if not (isinstance(seen.get(field), str) and seen[field])]
    assert missing == [], f"{event}: common input fields missing from stdin: {seen}"
    assert seen["hook_event_name"] == event
    assert seen["cwd"] == str(cc.ws)  # the session started there, and nothing changed it


@pytest.mark.parametrize("event", WITH_PERMISSION_MODE)
def test_permission_mode_is_on_stdin_where_the_reference_shows_it(cc: Session,
                                                                  event: str) -> None:
    """HOOKS, "Common input fields": `permission_mode` "Current permission mode:
    "default", "plan", "acceptEdits", "auto", "dontAsk", or "bypassPermissions" ... Not all
    events receive this field. Check the JSON example in each hook event section." The
    examples of PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop,
    SubagentStop, TeammateIdle and TaskCompleted all carry `"permission_mode": "default"`."""
    recording(cc, event)
    cc.start()
    cc.post(event)
    seen = cc.seen("hook")
    assert seen.get("permission_mode") in PERMISSION_MODES, \
        f"{event}: permission_mode missing or not a mode: {seen}"


def test_the_agents_own_common_fields_reach_the_hook_unchanged(cc: Session) -> None:
    """HOOKS, "Common input fields": the hook gets the "Current session identifier", the
    "Path to conversation JSON", the "Current working directory when the hook is invoked"
    and the "Current permission mode"; and, on `cwd`: "`cwd` follows Claude: the `cwd`
    field in the hook's input JSON is the worktree root after Claude enters a worktree, and
    the new directory after Claude runs `cd`." The agent knows these; what it says is what
    the hook reads."""
    recording(cc, "PreToolUse")
    sub = cc.ws / "pkg"
    sub.mkdir()
    cc.start()
    sent = {"session_id": "abc123", "transcript_path": "/home/u/.claude/projects/p/t.jsonl",
            "cwd": str(sub), "permission_mode": "plan", **PAYLOADS["PreToolUse"]}
    cc.post("PreToolUse", sent)
    seen = cc.seen("hook")
    for field in ("session_id", "transcript_path", "cwd", "permission_mode"):
        assert seen.get(field) == sent[field], (field, seen)


# -- each event's own fields -------------------------------------------------------------------


@pytest.mark.parametrize("event, fields", [
    # HOOKS, "PreToolUse input": "PreToolUse hooks receive `tool_name`, `tool_input`, and
    # `tool_use_id`."
    ("PreToolUse", ["tool_name", "tool_input", "tool_use_id"]),
    # "PostToolUse input": "The input includes both `tool_input` ... and `tool_response`"
    ("PostToolUse", ["tool_name", "tool_input", "tool_response", "tool_use_id"]),
    # "PostToolUseFailure hooks receive the same `tool_name` and `tool_input` fields as
    # PostToolUse, along with error information as top-level fields" (`error`)
    ("PostToolUseFailure", ["tool_name", "tool_input", "error"]),
    # "UserPromptSubmit hooks receive the `prompt` field containing the text the user
    # submitted."
    ("UserPromptSubmit", ["prompt"]),
    # "SessionStart hooks receive `source`"
    ("SessionStart", ["source"]),
    # "SessionEnd hooks receive a `reason` field indicating why the session ended."
    ("SessionEnd", ["reason"]),
    # "PreCompact hooks receive `trigger` and `custom_instructions`."
    ("PreCompact", ["trigger", "custom_instructions"]),
    # "Notification hooks receive `message` ... an optional `title`, and
    # `notification_type`"
    ("Notification", ["message", "title", "notification_type"]),
    # "SubagentStop hooks receive `stop_hook_active`, `agent_id`, `agent_type`, ..."
    ("SubagentStop", ["agent_id", "agent_type", "last_assistant_message"]),
    # "TeammateIdle hooks receive `teammate_name` and `team_name`."
    ("TeammateIdle", ["teammate_name", "team_name"]),
    # "TaskCompleted hooks receive `task_id`, `task_subject`, ..."
    ("TaskCompleted", ["task_id", "task_subject"]),
])
def test_each_events_own_fields_reach_the_hook(cc: Session, event: str,
                                               fields: list[str]) -> None:
    """HOOKS, "Hook events": "Each section describes when the event fires, what matchers it
    supports, the JSON input it receives" (the fields are quoted beside each case). The
    agent's event fields reach the hook on stdin, as sent."""
    recording(cc, event)
    cc.start()
    cc.post(event)
    seen = cc.seen("hook")
    for field in fields:
        assert seen.get(field) == PAYLOADS[event][field], (field, seen)


@pytest.mark.parametrize("event", ["Stop", "SubagentStop"])
def test_stop_hook_active_is_present_and_false_on_a_first_stop(cc: Session,
                                                                event: str) -> None:
    """HOOKS, "Stop input": "Stop hooks receive `stop_hook_active`, ... The
    `stop_hook_active` field is `true` when Claude Code is already continuing as a result
    of a stop hook." "SubagentStop input": "SubagentStop hooks receive `stop_hook_active`".
    Both examples carry it (`"stop_hook_active": false` in SubagentStop's). The field is
    always there; on a Stop that no Stop hook caused, it is false. The agent's payload
    does not say it: initd, which counts the blocks, does."""
    recording(cc, event)
    cc.start()
    cc.post(event)
    seen = cc.seen("hook")
    assert "stop_hook_active" in seen, f"{event}: stop_hook_active missing: {seen}"
    assert seen["stop_hook_active"] is False


@pytest.mark.parametrize("event", ["Stop", "SubagentStop"])
def test_stop_hook_active_is_true_after_a_blocked_stop_and_false_after_one_that_went_through(
        cc: Session, event: str) -> None:
    """HOOKS, "Stop input": "The `stop_hook_active` field is `true` when Claude Code is
    already continuing as a result of a stop hook. Check this value or process the
    transcript to avoid blocking on a condition that will never resolve."

    A hook that blocks unless `stop_hook_active` (the reference's own pattern, GUIDE: "Parse
    the `stop_hook_active` field from the JSON input and exit early if it's `true`"): the
    first Stop is blocked, the second (true) goes through, and a third, after a Stop that
    was not blocked, reads false again."""
    out = cc.out
    cc.project(hooks(**{event: group(command(
        f"input=$(cat); n=$(ls {q(out)} | grep -c '^stop-' || true); "
        f"printf '%s' \"$input\" > {q(out)}/stop-$n.json; "
        "if [[ \"$(jq -r '.stop_hook_active' <<<\"$input\")\" == true ]]; then exit 0; fi; "
        "echo 'keep going' >&2; exit 2", shell="bash"))}))
    cc.start()
    first, second, third = (cc.post(event) for _ in range(3))
    assert [first["blocked"], second["blocked"], third["blocked"]] == [True, False, True]
    active = [cc.seen(f"stop-{n}").get("stop_hook_active") for n in range(3)]
    assert active == [False, True, False]


# -- how a command runs ------------------------------------------------------------------------


def test_a_command_runs_in_bash(cc: Session) -> None:
    """HOOKS, "Command hook fields": `shell` "Shell to use for this hook. Accepts "bash"
    or "powershell". Defaults to "bash"". (The old revision: `command` "The bash command to
    execute".) So bash syntax works without a `shell` key: a `[[ ... ]]` test, `<<<`.

    (The same page also says shell form is "passed to a shell: `sh -c` on macOS and Linux";
    where /bin/sh is not bash, only the documented default "bash" runs what users write:
    the reference's own examples use `[[ "$command" == rm* ]]`.)"""
    cc.project(hooks(PreToolUse=group(command(
        f"[[ \"$(cat)\" == *npm* ]] && cat <<<yes > {q(cc.out / 'bash.txt')}"))))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert (cc.out / "bash.txt").exists(), f"not run by bash: {outcome['results']}"
    assert (cc.out / "bash.txt").read_text() == "yes\n"


def test_shell_bash_runs_the_command_with_bash(cc: Session) -> None:
    """HOOKS, "Command hook fields": `shell` "Shell to use for this hook. Accepts "bash" or
    "powershell"."; "Shell form ... Set the `shell` field to choose explicitly." """
    cc.project(hooks(PreToolUse=group(command(
        f"if [[ -n \"$BASH_VERSION\" ]]; then echo bash > {q(cc.out / 'shell.txt')}; fi",
        shell="bash"))))
    cc.start()
    cc.post("PreToolUse")
    assert (cc.out / "shell.txt").read_text() == "bash\n"


def test_the_hook_runs_in_the_project_directory_with_claude_project_dir_set(
        cc: Session) -> None:
    """HOOKS, "Hook handler fields": "Handlers run in the current directory with Claude
    Code's environment." "Reference scripts by path": "`${CLAUDE_PROJECT_DIR}`: the project
    root where the session started." "Exec form and shell form": "both export them as the
    environment variables `CLAUDE_PROJECT_DIR`, ... on the spawned process"."""
    cc.project(hooks(PreToolUse=group(command(
        f"pwd > {q(cc.out / 'pwd.txt')}; printf '%s' \"$CLAUDE_PROJECT_DIR\" > "
        f"{q(cc.out / 'dir.txt')}"))))
    cc.start()
    cc.post("PreToolUse")
    assert (cc.out / "pwd.txt").read_text().strip() == str(cc.ws)
    assert (cc.out / "dir.txt").read_text() == str(cc.ws)


def test_a_project_script_runs_through_claude_project_dir(cc: Session) -> None:
    """HOOKS, "Reference scripts by path": "Use these placeholders to reference hook scripts
    relative to the project or plugin root, regardless of the working directory when the
    hook runs"; "In shell form, wrap each placeholder in double quotes." The reference's
    own example is `"$CLAUDE_PROJECT_DIR"/.claude/hooks/...`, and its block-rm.sh reads
    stdin with jq."""
    cc.script("block-rm.sh", "COMMAND=$(jq -r '.tool_input.command')\n"
              "if echo \"$COMMAND\" | grep -q 'rm -rf'; then\n"
              "  jq -n '{hookSpecificOutput: {hookEventName: \"PreToolUse\",\n"
              "    permissionDecision: \"deny\",\n"
              "    permissionDecisionReason: \"Destructive command blocked by hook\"}}'\n"
              "else\n  exit 0\nfi")
    cc.project(hooks(PreToolUse=group(
        command("\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/block-rm.sh"), matcher="Bash")))
    cc.start()
    denied = cc.post("PreToolUse", {"tool_name": "Bash",
                                    "tool_input": {"command": "rm -rf /tmp/build"}})
    allowed = cc.post("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}})
    assert denied["blocked"] and denied["permissionDecision"] == "deny"
    assert denied["reason"] == "Destructive command blocked by hook"
    assert not allowed["blocked"] and allowed["permissionDecision"] is None


def test_exec_form_passes_each_arg_as_one_word_without_a_shell(cc: Session) -> None:
    """HOOKS, "Exec form and shell form": "**Exec form** runs when `args` is present.
    Claude Code resolves `command` as an executable on `PATH` and spawns it directly with
    `args` as the argument vector. There is no shell, so each `args` element is one argument
    exactly as written, and path placeholders like `${CLAUDE_PLUGIN_ROOT}` are substituted
    into `command` and into each `args` element as plain strings. Special characters such
    as apostrophes, `$`, and backticks pass through verbatim"."""
    cc.project(hooks(PreToolUse=group({
        "type": "command", "command": "touch",
        "args": ["${CLAUDE_PROJECT_DIR}/it's $HOME `id` ok"]})))
    cc.start()
    outcome = cc.post("PreToolUse")
    made = cc.ws / "it's $HOME `id` ok"
    assert made.exists(), f"no file {made.name!r}: {sorted(p.name for p in cc.ws.iterdir())}" \
                          f" {outcome['results']}"


def test_a_hook_runs_in_a_session_of_its_own(cc: Session) -> None:
    """HOOKS, "Hook input and output": "On macOS and Linux, command hooks run in their own
    session without a controlling terminal. The hook process and any child processes can't
    open `/dev/tty`"."""
    cc.project(hooks(PreToolUse=group(command(
        f"read -r -a stat < /proc/$$/stat; echo \"$$ ${{stat[5]}}\" > {q(cc.out / 'sid.txt')}; "
        f"if (exec 3</dev/tty) 2>/dev/null; then echo tty; else echo no-tty; fi "
        f">> {q(cc.out / 'sid.txt')}", shell="bash"))))
    cc.start()
    cc.post("PreToolUse")
    pid_sid, tty = (cc.out / "sid.txt").read_text().splitlines()
    pid, sid = pid_sid.split()
    assert pid == sid, "the hook's shell is not the leader of a session of its own"
    assert tty == "no-tty"


# -- matchers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("matcher, tool, runs", [
    # "Only letters, digits, `_`, `-`, spaces, `,`, and `|`": "Exact string, or list of
    # exact strings separated by `|` or `,` with optional surrounding whitespace"; "`Bash`
    # matches only the Bash tool"
    ("Bash", "Bash", True),
    ("Bash", "BashOutput", False),
    ("Bash", "bash", False),  # the old revision: "case-sensitive"
    ("Edit|Write", "Write", True),
    ("Edit|Write", "Edit", True),
    ("Edit|Write", "NotebookEdit", False),
    ("Edit, Write", "Write", True),  # "`Edit, Write` each match either tool exactly"
    # "a matcher like `mcp__memory` ... is compared as an exact string and matches no tool"
    ("mcp__memory", "mcp__memory__create_entities", False),
    # "Contains any other character": "JavaScript regular expression, unanchored";
    # "`^Notebook` matches any tool whose name starts with `Notebook`"
    ("^Notebook", "NotebookEdit", True),
    ("^Notebook", "MyNotebook", False),
    # "`Edit.*` matches both `Edit` and `NotebookEdit`; wrap the pattern in `^` and `$`, as
    # in `^Edit$`, when you need a whole-string match."
    ("Edit.*", "NotebookEdit", True),
    ("^Edit$", "NotebookEdit", False),
    ("^Edit$", "Edit", True),
    # "`mcp__memory__.*` matches all tools from the `memory` server"
    ("mcp__memory__.*", "mcp__memory__create_entities", True),
    ("mcp__memory__.*", "mcp__filesystem__read_file", False),
    ("mcp__brave-search__.*", "mcp__brave-search__web_search", True),
    # "`mcp__.*__write.*` matches any tool whose name starts with `write` from any server"
    ("mcp__.*__write.*", "mcp__github__write_file", True),
    # "`"*"`, `""`, or omitted": "Match all"
    ("*", "AnyTool", True),
    ("", "AnyTool", True),
    (None, "AnyTool", True),
])
def test_tool_matcher(cc: Session, matcher: str | None, tool: str, runs: bool) -> None:
    """HOOKS, "Matcher patterns": "How a matcher is evaluated depends on the characters it
    contains" (the rows are quoted beside each case); "A matcher on the regular-expression
    path is tested with JavaScript's `RegExp.prototype.test`, which succeeds on a match
    anywhere in the value." The old revision: "Pattern to match tool names,
    case-sensitive"."""
    cc.project(hooks(PreToolUse=group(command(cc.record("hook")), matcher=matcher)))
    cc.start()
    cc.post("PreToolUse", {"tool_name": tool, "tool_input": {}})
    assert cc.runs("hook") == (1 if runs else 0)


@pytest.mark.parametrize("event, matcher, payload, runs", [
    # "`SessionStart`: how the session started: `startup`, `resume`, `clear`, `compact`"
    ("SessionStart", "compact", {"source": "compact"}, True),
    ("SessionStart", "compact", {"source": "startup"}, False),
    ("SessionStart", "resume|clear", {"source": "clear"}, True),
    # "`SessionEnd`: why the session ended"
    ("SessionEnd", "logout", {"reason": "logout"}, True),
    ("SessionEnd", "logout", {"reason": "other"}, False),
    # "`PreCompact`, `PostCompact`: what triggered compaction: `manual`, `auto`"
    ("PreCompact", "auto", {"trigger": "auto", "custom_instructions": ""}, True),
    ("PreCompact", "auto", {"trigger": "manual", "custom_instructions": ""}, False),
    # "`Notification`: notification type"
    ("Notification", "idle_prompt", {"message": "m", "notification_type": "idle_prompt"},
     True),
    ("Notification", "idle_prompt",
     {"message": "m", "notification_type": "permission_prompt"}, False),
    # "`SubagentStop`: agent type"; "`code-reviewer` matches only that agent type"
    ("SubagentStop", "Explore", {"agent_id": "a", "agent_type": "Explore"}, True),
    ("SubagentStop", "Explore", {"agent_id": "a", "agent_type": "Plan"}, False),
    ("SubagentStop", "code-reviewer", {"agent_id": "a", "agent_type": "code-reviewer"}, True),
    ("SubagentStop", "code-reviewer",
     {"agent_id": "a", "agent_type": "senior-code-reviewer"}, False),
])
def test_matcher_filters_each_events_own_field(cc: Session, event: str, matcher: str,
                                               payload: dict[str, Any], runs: bool) -> None:
    """HOOKS, "Matcher patterns": "Each event type matches on a different field" (the
    rows are quoted beside each case); "Hyphens in the exact-match set require Claude Code
    v2.1.195 or later. On earlier versions a hyphenated name like `code-reviewer` is
    evaluated as an unanchored regular expression, so it also fires for
    `senior-code-reviewer`"."""
    cc.project(hooks(**{event: group(command(cc.record("hook")), matcher=matcher)}))
    cc.start()
    cc.post(event, payload)
    assert cc.runs("hook") == (1 if runs else 0)


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop", "TeammateIdle",
                                   "TaskCompleted"])
def test_a_matcher_on_an_event_without_matcher_support_is_ignored(cc: Session,
                                                                  event: str) -> None:
    """HOOKS, "Matcher patterns": "`UserPromptSubmit`, `PostToolBatch`, `Stop`,
    `TeammateIdle`, `TaskCreated`, `TaskCompleted`, ...: no matcher support: always fires on
    every occurrence"; "If you add a `matcher` field to an event without matcher support,
    it is silently ignored." """
    cc.project(hooks(**{event: group(command(cc.record("hook")), matcher="NoSuchThing")}))
    cc.start()
    cc.post(event)
    assert cc.runs("hook") == 1


def test_the_guides_two_hooks_both_run_and_the_deny_wins(cc: Session) -> None:
    """GUIDE (the example of two `PreToolUse` hooks on `Bash`): "When Claude tries to run
    `rm -rf /tmp/build`, both hooks execute in parallel. The logging hook writes the command
    to `~/.claude/bash.log` and exits 0, which reports no decision. The guardrail hook exits
    2, which denies the tool call. The deny takes precedence, so Claude Code blocks the
    command and shows Claude the guardrail's stderr. The log entry is still written because
    the logging hook already ran." (Both in one matcher group, the logger second.)"""
    log = cc.out / "bash.log"
    cc.project(hooks(PreToolUse=group(
        command("if jq -r '.tool_input.command' | grep -q 'rm -rf'; then "
                "echo 'Blocked: rm -rf is not allowed' >&2; exit 2; fi"),
        command(f"jq -r '.tool_input.command' >> {q(log)}"), matcher="Bash")))
    cc.start()
    outcome = cc.post("PreToolUse", {"tool_name": "Bash",
                                     "tool_input": {"command": "rm -rf /tmp/build"}})
    assert outcome["blocked"] and outcome["permissionDecision"] == "deny"
    assert "Blocked: rm -rf is not allowed" in (outcome["reason"] or "")
    assert log.read_text() == "rm -rf /tmp/build\n"
