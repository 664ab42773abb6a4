"""VS Code's agent hooks (the Local harness), the files: the workspace's .github/hooks/*.json
and the user's ~/.copilot/hooks/*.json, the Copilot format VS Code also reads, command
properties (OS overrides, cwd, env, timeout), the settings that add or drop locations,
the organisation's policy, the snapshot at the session's start, and bad files. Each case
quotes its passage (vscode_hooks_support names the references and their revisions).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_hooks_support import command, group, hooks, session_fixture
from tests.conformance.vscode_hooks_answers import blocked, read_answer
from tests.conformance.vscode_hooks_support import (
    VSCode,
    cmd,
    exits,
    payload,
    shell,
    vhooks,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def vs(tmp_path: Path) -> Iterator[VSCode]:
    for session in session_fixture(tmp_path):
        yield VSCode(session)


def denies(vs: VSCode, say: str = "denied") -> dict[str, object]:
    return vhooks(PreToolUse=cmd(exits(2, say)))


def rm(vs: VSCode) -> bool:
    return blocked(read_answer("PreToolUse", vs.emit(shell("rm -rf /tmp/x"))))


def test_every_json_file_of_the_workspace_hooks_folder_runs(vs: VSCode) -> None:
    """HOOKS, "Local hook file locations": Workspace `.github/hooks/*.json` "Native VS
    Code or Copilot-compatible hook files." (HOOKS_JUNE troubleshooting: "Verify the hook
    file is in `.github/hooks/` and has a `.json` extension.")"""
    vs.workspace("audit", vhooks(SessionStart=cmd(vs.s.record("audit"))))
    vs.workspace("format", vhooks(SessionStart=cmd(vs.s.record("format"))))
    notes = vs.s.ws / ".github" / "hooks" / "notes.md"
    notes.write_text('{"hooks": {"SessionStart": [{"type": "command", "command": "false"}]}}')
    vs.s.start()
    vs.emit(payload("SessionStart"))
    assert vs.s.runs("audit") == 1 and vs.s.runs("format") == 1


def test_the_users_hooks_folder_runs(vs: VSCode) -> None:
    """HOOKS: User `~/.copilot/hooks/*.json` "Available across Local sessions.\""""
    vs.user("mine", denies(vs, "the user's guard"))
    vs.s.start()
    assert rm(vs)


def test_a_deny_in_either_scope_wins_over_an_allow_in_the_other(vs: VSCode) -> None:
    """SRC hookSchema.ts mergeHooks ("concatenating the command arrays for each hook
    type") and LOCAL "the most restrictive decision wins": the workspace's allow does not
    lift the user's deny."""
    vs.workspace("allow", vhooks(PreToolUse=cmd(exits(0, out=(
        '{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
        '"permissionDecision": "allow"}}')))))
    vs.user("deny", denies(vs))
    vs.s.start()
    assert rm(vs)


def test_the_copilot_format_is_read_with_its_own_names(vs: VSCode) -> None:
    """HOOKS, "Local hook configuration formats": Copilot: "Numeric `version` property and
    lower camel case events": "Maps Copilot event and command property names to the Local
    format. Runtime payloads still use the Local schema." hookTypes.ts: `preToolUse`,
    `agentStop` (Stop), `userPromptSubmitted` (UserPromptSubmit); hookSchema.ts: "bash ->
    linux + osx", `timeoutSec` -> timeout."""
    vs.workspace("copilot", {"version": 1, "hooks": {
        "preToolUse": [{"type": "command", "bash": exits(2, "copilot format"),
                        "powershell": "exit 0", "timeoutSec": 10}],
        "agentStop": [{"type": "command", "bash": vs.s.record("stop")}],
        "userPromptSubmitted": [{"type": "command", "bash": vs.s.record("prompt")}]}})
    vs.s.start()
    assert rm(vs)
    vs.emit(payload("Stop"))
    vs.emit(payload("UserPromptSubmit"))
    assert vs.s.seen("stop")["hook_event_name"] == "Stop"
    assert vs.s.seen("prompt")["prompt"] == payload("UserPromptSubmit")["prompt"]


def test_the_linux_override_wins_over_command(vs: VSCode) -> None:
    """LOCAL, "Command properties": "The Local harness selects an operating system
    override from the extension host platform. If an override is not defined for that
    platform, it uses `command`." (`windows`, `osx` are other platforms here.)"""
    vs.workspace("os", vhooks(PreToolUse=cmd("exit 0", linux=exits(2, "linux one"),
                                             windows="exit 0", osx="exit 0"),
                              SessionStart=cmd(vs.s.record("plain"), windows="exit 3")))
    vs.s.start()
    assert rm(vs)
    vs.emit(payload("SessionStart"))
    assert vs.s.runs("plain") == 1


def test_cwd_is_relative_to_the_repository_root_and_env_is_added(vs: VSCode) -> None:
    """LOCAL, "Command properties": `cwd` "Working directory, relative to the repository
    root.", `env` "Additional environment variables.\""""
    (vs.s.ws / "tools").mkdir()
    out = vs.s.out / "where"
    vs.workspace("cwd", vhooks(SessionStart=cmd(
        f"cat >/dev/null; echo \"$(pwd) $AUDIT_LOG\" > {out}", cwd="tools",
        env={"AUDIT_LOG": ".github/hooks/audit.log"})))
    vs.s.start()
    vs.emit(payload("SessionStart"))
    where, log = out.read_text().split()
    assert Path(where).resolve() == (vs.s.ws / "tools").resolve()
    assert log == ".github/hooks/audit.log"


@pytest.mark.slow
def test_a_hook_past_its_timeout_decides_nothing(vs: VSCode) -> None:
    """LOCAL: `timeout` "Timeout in seconds. The default is 30 seconds." SRC hookExecutor:
    past it the command is killed (SIGTERM, then SIGKILL) and read as exit 1, "a
    non-blocking warning"; the other hook's deny stands."""
    vs.workspace("slow", vhooks(PreToolUse=[
        cmd("cat >/dev/null; sleep 60; echo late >&2; exit 2", timeout=1),
        cmd(exits(2, "the fast one"))]))
    vs.s.start()
    answer = read_answer("PreToolUse", vs.emit(shell("rm -rf /tmp/x")))
    assert blocked(answer) and "the fast one" in (answer.reason or "")
    assert "late" not in (answer.reason or "")


def test_hook_files_locations_adds_a_folder_and_a_file(vs: VSCode) -> None:
    """HOOKS: "Use `chat.hookFilesLocations` to add or disable Local hook locations ...
    Specify a folder to load all its `*.json` files, or specify an individual `.json`
    file. Paths can be relative to the workspace or start with `~`." (`"custom/hooks":
    true`, `"~/my-hooks/security.json": true`)"""
    vs.s._write(vs.s.ws / "custom" / "hooks" / "a.json", vhooks(
        SessionStart=cmd(vs.s.record("folder"))))
    vs.s._write(vs.s.home / "my-hooks" / "security.json", denies(vs, "security.json"))
    vs.user_settings({"chat.hookFilesLocations": {"custom/hooks": True,
                                                  "~/my-hooks/security.json": True}})
    vs.s.start()
    vs.emit(payload("SessionStart"))
    assert vs.s.runs("folder") == 1
    assert rm(vs)


def test_hook_files_locations_false_drops_a_built_in_location(vs: VSCode) -> None:
    """HOOKS: `".claude/settings.json": false     // Disable a built-in location.`; the
    same for `.github/hooks` (a built-in location, SRC DEFAULT_HOOK_FILE_PATHS)."""
    vs.workspace("audit", vhooks(SessionStart=cmd(vs.s.record("audit"))))
    vs.user("control", vhooks(SessionStart=cmd(vs.s.record("control"))))
    vs.user_settings({"chat.hookFilesLocations": {".github/hooks": False}})
    vs.s.start()
    vs.emit(payload("SessionStart"))
    assert vs.s.runs("audit") == 0 and vs.s.runs("control") == 1


def test_chat_use_hooks_false_runs_no_vscode_hook(vs: VSCode) -> None:
    """HOOKS: "The `chat.useHooks` setting controls Local hook execution and is on by
    default." (read at the session's start, as initd reads every setting)"""
    vs.workspace("audit", vhooks(SessionStart=cmd(vs.s.record("audit"))))
    vs.user_settings({"chat.useHooks": False})
    vs.s.start()
    proc = vs.emit(payload("SessionStart"))
    assert vs.s.runs("audit") == 0
    assert proc.returncode == 0, proc.stderr  # answered: nothing to say


def test_the_organisations_policy_turns_hooks_off(vs: VSCode) -> None:
    """ENTERPRISE, "Enable or disable hooks": "To disable hooks entirely, set the
    `ChatHooks` policy to `false`. This configures the `chat.useHooks` setting ... When
    this policy is applied, hook configurations are ignored and no hook commands are
    executed." POLICIES: "Starting from VS Code version 1.106, you can configure VS Code
    setting policies on Linux devices by placing a JSON policy file at
    `/etc/vscode/policy.json`." A policy wins over the user's setting."""
    vs.policy({"ChatHooks": False})
    vs.workspace("audit", vhooks(SessionStart=cmd(vs.s.record("audit"))))
    vs.user_settings({"chat.useHooks": True})
    vs.s.start()
    proc = vs.emit(payload("SessionStart"))
    assert vs.s.runs("audit") == 0
    assert proc.returncode == 0, proc.stderr  # answered: nothing to say


def test_a_claude_settings_hook_runs_once_for_a_vscode_event(vs: VSCode) -> None:
    """HOOKS: Workspace, Claude format `.claude/settings.json` ("Requires
    `chat.useClaudeHooks`"); VS Code would run it as its own, ignoring the matcher. initd
    reads that file as Claude Code's (its matcher honoured): the hook runs once, not a
    second time as a VS Code file (brief, interface (2))."""
    vs.s.project(hooks(PreToolUse=group(command(vs.s.record("claude")), matcher="Bash")))
    vs.s.start()
    vs.emit(shell("ls"))
    assert vs.s.runs("claude") == 1


def test_a_guard_rewritten_mid_session_still_denies(vs: VSCode) -> None:
    """Brief, interface (3): "The service snapshots hook files at its start (guards are
    fixed at the session's start)". (HOOKS, "Security considerations": "Require approval
    before an agent edits a script that a later hook can execute.")"""
    path = vs.workspace("guard", denies(vs, "still here"))
    vs.s.start()
    path.write_text('{"hooks": {}}')
    vs.user_settings({"chat.useHooks": False})
    assert rm(vs)


def test_a_hook_file_added_mid_session_does_not_run(vs: VSCode) -> None:
    """Brief, interface (3): "write files BEFORE start()": the snapshot of the start is
    what runs."""
    vs.workspace("early", vhooks(SessionStart=cmd(vs.s.record("early"))))
    vs.s.start()
    vs.workspace("late", vhooks(SessionStart=cmd(vs.s.record("late"))))
    vs.emit(payload("SessionStart"))
    assert vs.s.runs("late") == 0 and vs.s.runs("early") == 1


def started_or_refused(vs: VSCode, name: str) -> str | None:
    """Start the service; if initd refused the files (its load error), the log must name
    ``name`` and None is returned; else what emit and the log said."""
    try:
        vs.s.start()
    except AssertionError:
        text = vs.s.log.read_text()
        assert name in text, text[-2000:]
        return None
    return vs.s.log.read_text()


def test_a_malformed_hook_file_is_an_error_naming_it_and_the_guard_blocks(vs: VSCode) -> None:
    """Brief, interface (2): "A hook file initd cannot parse ... is an error naming the
    file and key; a guard-capable event whose guard is broken blocks." (VS Code skips it;
    the schema: hookSchema.ts `required: ['hooks']`.)"""
    bad = vs.s.ws / ".github" / "hooks" / "broken.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"hooks": {"PreToolUse": [ {"type": "command", "command": "exit 2"}')
    if started_or_refused(vs, "broken.json") is None:
        return
    proc = vs.emit(shell("rm -rf /tmp/x"))
    assert blocked(read_answer("PreToolUse", proc))
    assert "broken.json" in proc.stderr + proc.stdout + vs.s.log.read_text()


def test_an_unknown_event_name_is_a_warning_naming_the_file_and_the_name(vs: VSCode) -> None:
    """Issue 37, "Bad input per format": "an unknown event name is one warning naming the
    file and the name (a typo in a guard's event is never silent)". (VS Code skips it
    silently: hookSchema.ts `if (!hookType) { continue; }`.) The file's other events
    still run."""
    vs.workspace("typo", {"hooks": {"PreToolUsee": [cmd("exit 2")],
                                    "SessionStart": [cmd(vs.s.record("ok"))]}})
    log = started_or_refused(vs, "PreToolUsee")
    if log is None:
        return
    proc = vs.emit(payload("SessionStart"))
    text = vs.s.log.read_text() + proc.stderr
    assert "PreToolUsee" in text and "typo.json" in text
    assert vs.s.runs("ok") == 1
