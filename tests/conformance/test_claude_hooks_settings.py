"""Claude Code hooks, where hooks come from: the four settings files, their precedence,
`disableAllHooks` and `allowManagedHooksOnly`, and hooks fixed for the session so that the
agent cannot rewrite its own guards away; each case as Claude Code's public reference
states it (claude_hooks_support.HOOKS, SETTINGS, SETTINGS_REF; the revision of 2026-08-22
unless a case says otherwise), quoted in its docstring.

The managed file is /etc/claude-code/managed-settings.json (MANAGED: "**Linux and WSL**:
`/etc/claude-code/managed-settings.json`"); each test's service sees a copy of its own (a
mount namespace), so these cases need root and are skipped without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import (
    Session,
    command,
    group,
    hooks,
    q,
    session_fixture,
)

pytestmark = pytest.mark.timeout(120)

FILES = ["managed", "user", "project", "local"]


@pytest.fixture
def cc(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def four_files(cc: Session, **keys: dict[str, Any]) -> None:
    """A PreToolUse hook in each of the four files, recording under the file's name, with
    that file's other keys (``managed={"disableAllHooks": True}``)."""
    for name in FILES:
        settings = {**hooks(PreToolUse=group(command(cc.record(name)))), **keys.get(name, {})}
        getattr(cc, name)(settings)


def ran(cc: Session) -> set[str]:
    return {name for name in FILES if cc.runs(name)}


def test_the_hooks_of_all_four_settings_files_run(cc: Session) -> None:
    """HOOKS, "Hook locations": `~/.claude/settings.json` "All your projects",
    `.claude/settings.json` "Single project", `.claude/settings.local.json` "Single
    project", "Managed policy settings" "Organization-wide"; "Hook entries merge across
    settings levels rather than replacing each other: user, project, and local settings add
    their own hooks without removing managed ones"."""
    four_files(cc)
    cc.start()
    cc.post("PreToolUse")
    assert ran(cc) == set(FILES)


ALL = set(FILES)
NONE: set[str] = set()
# disableAllHooks in the files named (True or False; absent elsewhere) -> the files whose
# hooks run. Each row's passage is in the comment above it: HOOKS' and SETTINGS_REF's
# words are quoted in the test's docstring.
MATRIX = [
    # SETTINGS_REF: "Default: unset, so hooks run"
    ({}, ALL),
    # SETTINGS_REF: "In any other settings file: Claude Code disables user, project,
    # local, and plugin hooks; managed hooks ... keep running"
    ({"user": True}, {"managed"}),
    # initd's first choice (docs/claude-code.md, "Turning hooks off"): a workspace file is
    # the repository's, which the agent writes; its true turns off the workspace's hooks,
    # never the user's (the reference: all but the managed ones)
    ({"project": True}, {"managed", "user"}),
    ({"local": True}, {"managed", "user"}),
    ({"project": True, "local": True}, {"managed", "user"}),
    # issue 36: the user's own true turns off the user's hooks, whatever the workspace's
    # files say ("In any other settings file: Claude Code disables user ... hooks": the
    # user's file is one); the workspace's true turns off the workspace's
    ({"user": True, "project": True}, {"managed"}),
    ({"user": True, "local": True}, {"managed"}),
    ({"user": True, "project": True, "local": True}, {"managed"}),
    # SETTINGS_REF: "In managed settings: Claude Code disables every configured hook,
    # including managed ones"; HOOKS: "Only disableAllHooks set at the managed settings
    # level can disable managed hooks": with the others or alone, nothing runs
    ({"managed": True}, NONE),
    ({"managed": True, "user": True}, NONE),
    ({"managed": True, "project": True}, NONE),
    ({"managed": True, "local": True}, NONE),
    ({"managed": True, "user": True, "project": True}, NONE),
    ({"managed": True, "user": True, "local": True}, NONE),
    ({"managed": True, "project": True, "local": True}, NONE),
    ({"managed": True, "user": True, "project": True, "local": True}, NONE),
    # SETTINGS, precedence: managed settings: "Nothing you set overrides them"
    ({"managed": True, "local": False}, NONE),
    ({"managed": True, "project": False, "user": False}, NONE),
    # HOOKS: "Claude Code reads the value left after settings precedence applies";
    # SETTINGS: "1. Managed settings ... 3. Project local settings ... 4. Shared project
    # settings ... 5. User settings": the managed false is the value left, and every
    # hook runs
    ({"managed": False, "user": True}, ALL),
    ({"managed": False, "user": True, "project": True, "local": True}, ALL),
    # SETTINGS, precedence: "3. Project local settings ... 4. Shared project settings"
    ({"project": True, "local": False}, ALL),
    ({"local": True, "project": False}, {"managed", "user"}),
    ({"user": False, "project": True}, {"managed", "user"}),
    ({"user": False}, ALL),
    # HOOKS: "a "disableAllHooks": false in a project's .claude/settings.json overrides a
    # true in your user settings": it does for the workspace's hooks; the user's own stay
    # off (initd's second choice, docs/claude-code.md: the workspace's files decide
    # nothing about the user's hooks, neither off nor back on)
    ({"user": True, "project": False}, {"managed", "project", "local"}),
    ({"user": True, "local": False}, {"managed", "project", "local"}),
]


def _id(disable: dict[str, bool]) -> str:
    return ",".join(f"{name}-{str(value).lower()}" for name, value in disable.items()) \
        or "none"


@pytest.mark.parametrize("disable, running", [pytest.param(*row, id=_id(row[0]))
                                              for row in MATRIX])
def test_disable_all_hooks_follows_settings_precedence(cc: Session, disable: dict[str, bool],
                                                       running: set[str]) -> None:
    """HOOKS, "Disable or remove hooks" (2026-08-22; the same in the page as fetched on
    2026-10-08): "To temporarily disable all hooks without removing them, set
    "disableAllHooks": true in your settings file. Claude Code reads the value left after
    settings precedence applies, so a "disableAllHooks": false in a project's
    .claude/settings.json overrides a true in your user settings." "The disableAllHooks
    setting respects the managed settings hierarchy. If an administrator has configured
    hooks through managed policy settings, disableAllHooks set in user, project, or local
    settings can't disable those managed hooks. Only disableAllHooks set at the managed
    settings level can disable managed hooks."

    SETTINGS, "Settings precedence": "In order, highest precedence first: 1. Managed
    settings ... 3. Project local settings (.claude/settings.local.json) ... 4. Shared
    project settings (.claude/settings.json) ... 5. User settings (~/.claude/settings.json)".
    SETTINGS_REF, `disableAllHooks`: "Scope: Any file. Only managed settings can disable
    managed hooks." "The reach depends on which file carries the key: In managed settings:
    Claude Code disables every configured hook, including managed ones ...; In any other
    settings file: Claude Code disables user, project, local, and plugin hooks; managed
    hooks ... keep running".

    Every file has a PreToolUse hook; the row says which ran. Where initd chooses
    otherwise (a workspace file decides nothing about the user's hooks), the row says so,
    and docs/claude-code.md gives the reason."""
    four_files(cc, **{name: {"disableAllHooks": value} for name, value in disable.items()})
    cc.start()
    outcome = cc.post("PreToolUse")
    assert ran(cc) == running, outcome["results"]


def test_allow_managed_hooks_only_runs_the_managed_hooks_alone(cc: Session) -> None:
    """SETTINGS_REF, `allowManagedHooksOnly`: "Restrict hook execution to hooks your
    organization deploys. Scope: Managed"; "Everything else is blocked: user, project, and
    local hooks". HOOKS, "Hook locations": "Your user, project, local, and plugin hooks
    are blocked"."""
    four_files(cc, managed={"allowManagedHooksOnly": True})
    cc.start()
    cc.post("PreToolUse")
    assert ran(cc) == {"managed"}


@pytest.mark.parametrize("where", ["user", "project", "local"])
def test_allow_managed_hooks_only_outside_the_managed_file_changes_nothing(
        cc: Session, where: str) -> None:
    """SETTINGS_REF, `allowManagedHooksOnly`: "Scope: Managed"; the scopes: a key of scope
    Managed is read from managed settings. A repository cannot use it to switch off its
    user's hooks (nor a user the managed ones)."""
    four_files(cc, **{where: {"allowManagedHooksOnly": True}})
    cc.start()
    cc.post("PreToolUse")
    assert ran(cc) == set(FILES)


# -- hooks are fixed for the session -----------------------------------------------------------


def deny_rm() -> dict[str, Any]:
    return hooks(PreToolUse=group(command(
        "if jq -r '.tool_input.command' | grep -q 'rm -rf'; then "
        "echo 'no rm -rf' >&2; exit 2; fi"), matcher="Bash"))


RM = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}


@pytest.mark.slow
@pytest.mark.parametrize("first_call", [True, False],
                         ids=["after-a-tool-call", "before-the-first-tool-call"])
@pytest.mark.parametrize("rewrite", [
    "empty the project settings",
    "disable all hooks in settings.local.json",
    "both, and a user settings file that disables all hooks",
], ids=["project-emptied", "local-disables-all", "all-three"])
def test_an_agent_rewriting_settings_mid_session_cannot_drop_a_deny_hook(
        cc: Session, rewrite: str, first_call: bool) -> None:
    """HOOKS, old revision (2025-07 to 2026-03), "Configuration Safety": "Direct edits to
    hooks in settings files don't take effect immediately. Claude Code: 1. Captures a
    snapshot of hooks at startup 2. Uses this snapshot throughout the session 3. Warns if
    hooks are modified externally 4. Requires review in /hooks menu for changes to apply.
    This prevents malicious hook modifications from affecting your current session."

    The current revision says instead: "Direct edits to hooks in settings files are
    normally picked up automatically by the file watcher", and guards that file from the
    agent elsewhere: https://code.claude.com/docs/en/permission-modes: "Writes to protected
    paths are never auto-approved except in bypassPermissions mode" (`.claude` is one:
    "writes to protected paths such as `.git` and `.claude`", /docs/en/permissions).
    initd cannot tell a person's edit from the agent's, so the agent's write must not
    reach the running session: its next tool call still meets the deny hook, whether or
    not a tool call came before the rewrite (the snapshot is taken "at startup")."""
    cc.project(deny_rm())
    cc.start()
    if first_call:
        assert cc.post("PreToolUse", RM)["blocked"] is True
    if rewrite.startswith(("empty", "both")):
        cc.project({})
    if rewrite.startswith(("disable", "both")):
        cc.local({"disableAllHooks": True, "hooks": {}})
    if rewrite.startswith("both"):
        cc.user({"disableAllHooks": True})
    outcome = cc.post("PreToolUse", RM)
    assert outcome["blocked"] is True, outcome["results"]
    assert "no rm -rf" in (outcome["reason"] or "")


def test_a_user_hook_rewritten_mid_session_still_runs(cc: Session) -> None:
    """As above, for the user's own file (HOOKS, old revision, "Configuration Safety":
    "Captures a snapshot of hooks at startup ... Uses this snapshot throughout the
    session"): the agent runs as the user and can write `~/.claude/settings.json` too."""
    cc.user(deny_rm())
    cc.start()
    assert cc.post("PreToolUse", RM)["blocked"] is True
    cc.user({"hooks": {"PreToolUse": [group(command(f"touch {q(cc.out / 'swapped')}"))]}})
    outcome = cc.post("PreToolUse", RM)
    assert outcome["blocked"] is True
    assert not (cc.out / "swapped").exists()


def test_a_settings_file_changed_mid_session_is_reported_once(cc: Session) -> None:
    """HOOKS, old revision, "Configuration Safety": "3. Warns if hooks are modified
    externally". The change is said once in the service's log, naming the file, however
    many events follow."""
    settings = cc.project(deny_rm())
    cc.start()
    cc.project({})
    for _ in range(3):
        cc.post("PreToolUse", RM)
    lines = [line for line in cc.log_lines() if "hook files changed" in line]
    assert len(lines) == 1 and str(settings) in lines[0], lines
