"""Where Gemini CLI's hooks live and which run: ``.gemini/settings.json`` in the project,
``~/.gemini/settings.json``, ``/etc/gemini-cli/settings.json`` and
``/etc/gemini-cli/system-defaults.json`` (or the paths their variables name), merged so
that the hooks of every level run; ``hooksConfig.enabled`` and ``hooksConfig.disabled``;
comments; a malformed file and an unknown event name.

Reference: https://geminicli.com/docs/reference/configuration and
https://geminicli.com/docs/hooks/ (as shipped in @google/gemini-cli@0.61.0 = gemini-cli
git 5411f113, 2026-08-21); gemini-cli packages/cli/src/config/settings.ts and
settingsSchema.ts at 5411f113 and @google/gemini-cli-core@0.61.0 dist/src/hooks where the
documentation is silent."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_hooks_support import INITD
from tests.conformance.gemini_hooks_support import (
    GeminiSession,
    exits,
    group,
    hook,
    settings,
    tool,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def gs(tmp_path: Path) -> Iterator[GeminiSession]:
    session = GeminiSession(tmp_path)
    try:
        yield session
    finally:
        session.stop()


def recorder(gs: GeminiSession, label: str, body: str = "echo '{}'",
             **more: object) -> dict[str, object]:
    return hook(gs.record(label) + "; " + body, **more)


def shell(gs: GeminiSession, command: str = "rm -rf /tmp/x") -> dict[str, object]:
    return tool(gs, "run_shell_command", command=command)


def test_a_user_level_hook_runs(gs: GeminiSession) -> None:
    """CONFIGURATION "User settings file: Location: ~/.gemini/settings.json ... Applies to
    all Gemini CLI sessions for the current user." """
    gs.gemini_user(settings(BeforeTool=group(recorder(gs, "user", exits(2, "user says no")))))
    gs.start()
    answer = gs.ask(shell(gs))
    assert answer.blocked and "user says no" in answer.reason, answer
    assert gs.seen("user")["tool_name"] == "run_shell_command"


def test_a_system_level_hook_runs(gs: GeminiSession) -> None:
    """CONFIGURATION "System settings file: Location: /etc/gemini-cli/settings.json (Linux)
    ... Applies to all Gemini CLI sessions on the system, for all users." """
    gs.gemini_system(settings(BeforeTool=group(recorder(gs, "sys", exits(2, "policy")))))
    gs.start()
    answer = gs.ask(shell(gs))
    assert answer.blocked and "policy" in answer.reason, answer
    assert gs.runs("sys") == 1


def test_a_system_defaults_hook_runs(gs: GeminiSession) -> None:
    """CONFIGURATION "System defaults file: Location: /etc/gemini-cli/system-defaults.json
    (Linux) ... Provides a base layer of system-wide default settings."; each event's hooks
    merge by CONCAT (settingsSchema.ts hooks.*: mergeStrategy CONCAT)."""
    gs.gemini_system_defaults(settings(BeforeTool=group(recorder(gs, "defaults",
                                                                 exits(2, "default")))))
    gs.start()
    answer = gs.ask(shell(gs))
    assert answer.blocked and "default" in answer.reason, answer


def test_the_system_settings_path_variable_is_honoured(gs: GeminiSession) -> None:
    """CONFIGURATION "System settings file: ... The path can be overridden using the
    GEMINI_CLI_SYSTEM_SETTINGS_PATH environment variable." (settings.ts
    getSystemSettingsPath; the system defaults file is then beside it)."""
    path = gs.root / "managed" / "gemini-settings.json"
    gs._put(path, settings(BeforeTool=group(recorder(gs, "managed", exits(2, "managed")))))
    gs.env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] = str(path)
    gs.start()
    answer = gs.ask(shell(gs))
    assert answer.blocked and "managed" in answer.reason, answer


def test_the_hooks_of_every_level_run(gs: GeminiSession) -> None:
    """HOOKS "Configuration": "Gemini CLI merges configurations from multiple layers"
    (project, user, system); settingsSchema.ts: every hooks.<Event> has mergeStrategy
    MergeStrategy.CONCAT, so a project file does not hide the user's or the system's
    hooks."""
    gs.gemini_project(settings(BeforeTool=group(recorder(gs, "project"))))
    gs.gemini_user(settings(BeforeTool=group(recorder(gs, "user"))))
    gs.gemini_system(settings(BeforeTool=group(recorder(gs, "system"))))
    gs.start()
    answer = gs.ask(shell(gs, "ls"))
    assert not answer.blocked, answer
    assert (gs.runs("project"), gs.runs("user"), gs.runs("system")) == (1, 1, 1)


def test_a_users_deny_is_not_undone_by_a_projects_allow(gs: GeminiSession) -> None:
    """HOOKS "Configuration" (layers merged) and CORE hookAggregator.mergeWithOrDecision:
    a block from any hook of any level wins."""
    gs.gemini_project(settings(BeforeTool=group(hook("cat >/dev/null; echo "
                                                     "'{\"decision\": \"allow\"}'"))))
    gs.gemini_user(settings(BeforeTool=group(hook("cat >/dev/null; " +
                                                  exits(2, "user guard")))))
    gs.start()
    answer = gs.ask(shell(gs))
    assert answer.blocked and "user guard" in answer.reason, answer


def test_the_same_hook_in_two_files_runs_once(gs: GeminiSession) -> None:
    """CORE hookPlanner.deduplicateHooks: hooks with the same key (getHookKey: name + ":"
    + command) run once for an event."""
    same = recorder(gs, "same", name="audit")
    gs.gemini_project(settings(BeforeTool=group(same)))
    gs.gemini_user(settings(BeforeTool=group(same)))
    gs.start()
    gs.gemini(shell(gs, "ls"))
    assert gs.runs("same") == 1


def test_hooks_disabled_by_hooksconfig_do_not_run(gs: GeminiSession) -> None:
    """CONFIGURATION "hooksConfig.enabled (boolean): Canonical toggle for the hooks system.
    When disabled, no hooks will be executed." """
    gs.gemini_user({"hooksConfig": {"enabled": False},
                    **settings(BeforeTool=group(recorder(gs, "user", exits(2, "no"))))})
    gs.gemini_project(settings(BeforeTool=group(recorder(gs, "project", exits(2, "no")))))
    gs.start()
    answer = gs.ask(shell(gs, "ls"))
    assert answer.code == 0 and answer.valid and not answer.blocked, answer
    assert gs.runs("user") == 0 and gs.runs("project") == 0


def test_the_system_files_enabled_overrides_the_users(gs: GeminiSession) -> None:
    """CONFIGURATION "System settings file ... System settings act as overrides, taking
    precedence over all other settings files": hooksConfig.enabled true there wins over a
    user's false, and the system's guard runs."""
    gs.gemini_user({"hooksConfig": {"enabled": False}})
    gs.gemini_system({"hooksConfig": {"enabled": True},
                      **settings(BeforeTool=group(recorder(gs, "sys", exits(2, "held"))))})
    gs.start()
    answer = gs.ask(shell(gs))
    assert answer.blocked and "held" in answer.reason, answer


@pytest.mark.parametrize("by", ["name", "command"])
def test_a_hook_named_in_hooksconfig_disabled_does_not_run(gs: GeminiSession,
                                                           by: str) -> None:
    """CONFIGURATION "hooksConfig.disabled (array): List of hook names (commands) that
    should be disabled. Hooks in this list will not execute even if configured." (a hook's
    name is its name, else its command: hookRegistry.getHookName)."""
    off = recorder(gs, "off", **({"name": "noisy"} if by == "name" else {}))
    key = "noisy" if by == "name" else str(off["command"])
    gs.gemini_user({"hooksConfig": {"disabled": [key]}})
    gs.gemini_project(settings(BeforeTool=group(off, recorder(gs, "on", name="kept"))))
    gs.start()
    gs.gemini(shell(gs, "ls"))
    assert gs.runs("off") == 0 and gs.runs("on") == 1


def test_a_settings_file_with_comments_is_read(gs: GeminiSession) -> None:
    """settings.ts loads each settings file with JSON.parse(stripJsonComments(content)):
    settings.json may carry // and /* */ comments."""
    command = gs.record("commented") + "; " + exits(2, "commented guard")
    gs.gemini_project('{\n  // project guards\n  "hooks": {\n    /* tools */\n'
                      '    "BeforeTool": [{"hooks": [{"type": "command", "command": '
                      + json.dumps(command) + "}]}]\n  }\n}\n")
    gs.start()
    answer = gs.ask(shell(gs))
    assert answer.blocked and "commented guard" in answer.reason, answer


def test_a_malformed_settings_file_is_an_error_and_its_guards_block(
        gs: GeminiSession) -> None:
    """The interface contract: "A hook file initd cannot parse ... is an error naming the
    file ...; a guard-capable event whose guard is broken blocks" (settings.ts: a file that
    does not parse is a settings error of severity "error" with its path)."""
    path = gs.gemini_project('{"hooks": {"BeforeTool": [ {"hooks": [')
    try:
        gs.start()
    except AssertionError:
        assert str(path) in gs.log.read_text() or ".gemini/settings.json" in \
            gs.log.read_text()
        return
    answer = gs.ask(shell(gs))
    assert answer.valid and answer.blocked, answer
    said = answer.reason + answer.stderr + gs.log.read_text()
    assert ".gemini/settings.json" in said, said


def test_an_unknown_event_name_is_one_warning_naming_file_and_name(gs: GeminiSession) -> None:
    """hookRegistry.processHooksConfiguration: "Invalid hook event name: "<name>" from
    <source> config. Skipping." (the issue: "an unknown event name is one warning naming the
    file and the name"); the file's known events still run."""
    path = gs.gemini_project(settings(BeforeTools=group(recorder(gs, "typo")),
                                      BeforeTool=group(recorder(gs, "good", exits(2, "ok")))))
    gs.start()
    answer = gs.ask(shell(gs))
    assert answer.blocked and "ok" in answer.reason, answer
    warnings = [line for line in gs.log_lines() if "BeforeTools" in line]
    assert len(warnings) == 1, gs.log.read_text()
    assert ".gemini/settings.json" in warnings[0] or str(path) in warnings[0], warnings


def test_the_hooksconfig_keys_are_not_events(gs: GeminiSession) -> None:
    """types.d.ts HOOKS_CONFIG_FIELDS = ['enabled', 'disabled', 'notifications']: keys of
    the hooks object that are no event and no error."""
    gs.gemini_project({"hooks": {"enabled": True, "disabled": [], "notifications": False,
                                 "BeforeTool": [group(recorder(gs, "good"))]}})
    gs.start()
    gs.gemini(shell(gs, "ls"))
    assert gs.runs("good") == 1
    assert not [line for line in gs.log_lines()
                if "notifications" in line and "event" in line.lower()], gs.log.read_text()


def test_initds_own_line_in_the_users_settings_is_not_a_hook_of_its_own(
        gs: GeminiSession) -> None:
    """The routing line (`initd emit --from gemini`, the interface contract 1) lives in the
    user's ~/.gemini/settings.json, the very file initd reads for Gemini's user hooks
    (CONFIGURATION "User settings file"): initd must not run it as a hook of that event
    (it would call itself), and the other hooks still run once."""
    line = " ".join([*INITD, "emit", "--from", "gemini", "--socket", gs.sock])
    gs.gemini_user(settings(**{event: group(hook(line, name="initd"))
                               for event in ("BeforeTool", "SessionStart", "AfterAgent")}))
    gs.gemini_project(settings(BeforeTool=group(recorder(gs, "guard", exits(2, "held")))))
    gs.start()
    answer = gs.ask(shell(gs), timeout=60)
    assert answer.blocked and "held" in answer.reason, answer
    assert gs.runs("guard") == 1
