"""The handler fields of Claude Code's current reference (once, async, asyncRewake,
statusMessage, shell, args, if) and CLAUDE_ENV_FILE, for hooks initd runs on
``initd emit --from claude``. Every case cites REF (https://code.claude.com/docs/en/hooks,
the revision of 2026-08-22, Claude Code v2.1.240) and says which deviation of initd's (no
model, no UI) would still be acceptable.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_current_support import (
    ENV_FILE_EVENTS,
    emit_from,
    payload,
    read_answer,
)
from tests.conformance.claude_hooks_support import (
    Session,
    command,
    group,
    hooks,
    q,
    session_fixture,
    wait_until,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cc(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


@pytest.mark.parametrize("event", ENV_FILE_EVENTS)
def test_claude_env_file_reaches_the_hooks_and_what_they_write_reaches_claude(
        cc: Session, event: str) -> None:
    """REF, "Persist environment variables": "SessionStart hooks have access to the
    CLAUDE_ENV_FILE environment variable, which provides a file path where you can persist
    environment variables for subsequent Bash commands ... Use append (>>)"; Note:
    "CLAUDE_ENV_FILE is available for SessionStart, Setup, CwdChanged, and FileChanged
    hooks." (The issue: "SessionStart hooks get no CLAUDE_ENV_FILE".)

    Claude Code gives `initd emit --from claude` (its hook) a CLAUDE_ENV_FILE; the hooks
    initd runs append to it, and after the answer the file Claude Code sources holds their
    lines. Acceptable: initd hands each hook a file of its own and appends it to Claude
    Code's file before it answers."""
    env_file = cc.root / "session-env" / "sessionstart-hook-0.sh"
    env_file.parent.mkdir()
    env_file.write_text("export ALREADY=1\n")
    cc.project(hooks(**{event: group(command(
        "cat >/dev/null; [ -n \"$CLAUDE_ENV_FILE\" ] && "
        "echo 'export NODE_ENV=production' >> \"$CLAUDE_ENV_FILE\""))}))
    cc.start()
    proc = emit_from(cc, payload(event, cc), env={"CLAUDE_ENV_FILE": str(env_file)})
    lines = env_file.read_text().splitlines()
    assert lines == ["export ALREADY=1", "export NODE_ENV=production"], \
        read_answer(event, proc).describe()


@pytest.mark.parametrize("event", ["PreToolUse", "UserPromptSubmit", "Stop"])
def test_other_events_hooks_have_no_claude_env_file(cc: Session, event: str) -> None:
    """REF, Note: "Other hook types don't have access to this variable." A hook of another
    event finds no CLAUDE_ENV_FILE, even when initd's own environment had one."""
    seen = cc.out / "env-file"
    cc.project(hooks(**{event: group(command(
        f"cat >/dev/null; echo \"${{CLAUDE_ENV_FILE-unset}}\" > {q(seen)}"))}))
    cc.start()
    emit_from(cc, payload(event, cc), env={"CLAUDE_ENV_FILE": str(cc.root / "leak.sh")})
    assert seen.read_text().strip() == "unset"


def test_hooks_get_claude_project_dir(cc: Session) -> None:
    """REF, "Reference scripts by path": "${CLAUDE_PROJECT_DIR}: the project root where the
    session started"; both forms "export them as the environment variables
    CLAUDE_PROJECT_DIR ... on the spawned process"."""
    seen = cc.out / "dir"
    cc.project(hooks(Setup=group(command(f"cat >/dev/null; echo \"$CLAUDE_PROJECT_DIR\" > "
                                         f"{q(seen)}"))))
    cc.start()
    emit_from(cc, payload("Setup", cc))
    assert seen.read_text().strip() == str(cc.ws)


def test_once_is_ignored_in_settings_files(cc: Session) -> None:
    """REF, "Common fields": `once` "If true, runs once per session then is removed. Only
    honored for hooks declared in skill frontmatter; ignored in settings files and agent
    frontmatter." A settings-file hook with once: true runs on every event."""
    cc.project(hooks(UserPromptSubmit=group(command(cc.record("once"), once=True))))
    cc.start()
    for _ in range(2):
        emit_from(cc, payload("UserPromptSubmit", cc))
    assert cc.runs("once") == 2


@pytest.mark.parametrize("flag", ["async", "asyncRewake"])
def test_a_background_hook_neither_delays_nor_decides(cc: Session, flag: str) -> None:
    """REF, "Run hooks in the background": "When an async hook fires, Claude Code starts the
    hook process and immediately continues without waiting for it to finish"; "Async hooks
    can't block or control Claude's behavior". `asyncRewake` "runs in the background and
    wakes Claude on exit code 2. Implies async."

    The hook waits for a file the test makes only after initd answered, then denies with
    exit 2: the answer came first and denies nothing. (initd has no model to wake: its
    answer to a later event, or its log, may carry the rewake's stderr; not asserted.)"""
    release, done = cc.out / "release", cc.out / "done"
    cc.project(hooks(PreToolUse=group(command(
        f"cat >/dev/null; i=0; while [ ! -e {q(release)} ] && [ $i -lt 600 ]; do sleep 0.1; "
        f"i=$((i+1)); done; touch {q(done)}; echo 'late deny' >&2; exit 2",
        **{flag: True}), matcher="Bash")))
    cc.start()
    answer = read_answer("PreToolUse", emit_from(cc, payload("PreToolUse", cc)))
    released_after = not done.exists()
    release.touch()
    wait_until(done.exists, what="the background hook to finish")
    assert released_after, "the answer waited for the background hook"
    assert not answer.blocked and answer.permission is None, answer.describe()


def test_status_message_is_accepted_and_changes_nothing(cc: Session) -> None:
    """REF, "Common fields": `statusMessage` "Custom spinner message displayed while the hook
    runs". initd has no spinner: the field is accepted (not a load error) and the hook's
    answer stands."""
    cc.project(hooks(PreToolUse=group(command(
        "cat >/dev/null; echo 'no rm here' >&2; exit 2", statusMessage="Checking rm..."),
        matcher="Bash")))
    cc.start()
    answer = read_answer("PreToolUse", emit_from(cc, payload("PreToolUse", cc)))
    assert answer.blocked and "no rm here" in (answer.reason or ""), answer.describe()


def test_shell_bash_runs_the_command_with_bash(cc: Session) -> None:
    """REF, "Command hook fields": `shell` "Accepts "bash" or "powershell". Defaults to
    "bash""; the SDK's Settings type: "'bash' uses your $SHELL (bash/zsh/sh)". A command
    in bash's own syntax runs."""
    seen = cc.out / "bash"
    cc.project(hooks(Setup=group(command(
        f"cat >/dev/null; if [[ -n \"$BASH_VERSION\" ]]; then echo bash > {q(seen)}; fi",
        shell="bash"))))
    cc.start()
    emit_from(cc, payload("Setup", cc))
    assert seen.read_text().strip() == "bash"


def test_shell_powershell_is_not_run_by_sh(cc: Session) -> None:
    """REF: `shell` "powershell" "runs the command via PowerShell on Windows" ("Claude Code
    auto-detects pwsh.exe"). On Linux, without PowerShell, initd must not run the command
    with sh instead: the hook fails (an error result; acceptable as the reference's
    non-blocking error), and its sh-only line does not run."""
    seen = cc.out / "ran"
    cc.project(hooks(Setup=group(command(f"[ -n x ] && echo sh > {q(seen)}",
                                         shell="powershell"))))
    cc.start()
    emit_from(cc, payload("Setup", cc))
    assert not seen.exists()


def test_args_is_exec_form_with_placeholders_substituted(cc: Session) -> None:
    """REF, "Exec form and shell form": "Exec form runs when args is present ... There is no
    shell, so each args element is one argument exactly as written, and path placeholders
    like ${CLAUDE_PLUGIN_ROOT} are substituted into command and into each args element as
    plain strings. Special characters such as apostrophes, $, and backticks pass through
    verbatim"."""
    seen = cc.out / "argv"
    cc.project(hooks(UserPromptSubmit=group({
        "type": "command", "command": "sh",
        "args": ["-c", f"cat >/dev/null; printf '%s' \"$1\" > {q(seen)}", "sh",
                 "it's $HOME `id` ${CLAUDE_PROJECT_DIR}/x"]})))
    cc.start()
    emit_from(cc, payload("UserPromptSubmit", cc))
    assert seen.read_text() == f"it's $HOME `id` {cc.ws}/x"


def test_if_on_an_event_that_is_not_a_tool_event_never_runs(cc: Session) -> None:
    """REF, "Common fields": `if` "Only evaluated on tool events: PreToolUse, PostToolUse,
    PostToolUseFailure, PermissionRequest, and PermissionDenied. On other events, a hook
    with if set never runs"."""
    cc.project(hooks(UserPromptSubmit=group(command(cc.record("with-if"), **{"if": "Bash(*)"}),
                                            command(cc.record("without")))))
    cc.start()
    emit_from(cc, payload("UserPromptSubmit", cc))
    assert cc.runs("without") == 1 and cc.runs("with-if") == 0


@pytest.mark.parametrize("event, tool_input", [
    ("PermissionRequest", {"command": "rm -rf node_modules"}),
    ("PermissionDenied", {"command": "rm -rf /tmp/build"}),
])
def test_if_is_evaluated_on_the_permission_events(cc: Session, event: str,
                                                  tool_input: dict[str, str]) -> None:
    """REF, "Common fields": `if` is evaluated on "PermissionRequest, and PermissionDenied"
    too: `Bash(rm *)` runs for an rm, `Bash(git *)` does not."""
    cc.project(hooks(**{event: group(command(cc.record("rm"), **{"if": "Bash(rm *)"}),
                                     command(cc.record("git"), **{"if": "Bash(git *)"}),
                                     matcher="Bash")}))
    cc.start()
    emit_from(cc, payload(event, cc, tool_input=tool_input))
    assert cc.runs("rm") == 1 and cc.runs("git") == 0
