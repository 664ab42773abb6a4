"""Claude Code's row of issue 37's guard matrix (three guards written once as Claude Code
project hooks hold for Claude Code's own payloads through ``initd emit --from claude``),
and ``initd shim claude``: the settings snippet that routes every event of the reference
to initd. Cases cite REF (https://code.claude.com/docs/en/hooks, the revision of
2026-08-22, Claude Code v2.1.240) and the SDK's Settings type (contracts/claude).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_current_support import (
    ALL_EVENTS,
    emit_from,
    payload,
    read_answer,
    schema_errors,
)
from tests.conformance.claude_hooks_support import (
    INITD,
    Session,
    command,
    group,
    hooks,
    results_of,
    session_fixture,
)

pytestmark = pytest.mark.timeout(120)

DOTENV = ("python3 -c 'import json, sys; p = json.load(sys.stdin)[\"tool_input\"]"
          ".get(\"file_path\", \"\"); sys.exit(2 if p.endswith(\".env\") else 0)' "
          "|| { echo 'no writes to .env' >&2; exit 2; }")


@pytest.fixture
def cc(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def the_three_guards(cc: Session) -> None:
    """Issue 37's guards, as its brief writes them: matcher Bash `if: "Bash(rm *)"` deny by
    exit 2; matcher Bash `if: "Bash(git push *)"`; matcher `Write|Edit` exits 2 for a
    tool_input.file_path ending in `.env`."""
    cc.project(hooks(PreToolUse=[
        group(command("cat >/dev/null; echo 'rm is not allowed' >&2; exit 2",
                      **{"if": "Bash(rm *)"}), matcher="Bash"),
        group(command("cat >/dev/null; echo 'no pushes' >&2; exit 2",
                      **{"if": "Bash(git push *)"}), matcher="Bash"),
        group(command(DOTENV), matcher="Write|Edit"),
    ]))


def tool_call(cc: Session, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return payload("PreToolUse", cc, tool_name=name, tool_input=tool_input)


@pytest.mark.parametrize("name, tool_input", [
    ("Bash", {"command": "rm -rf /tmp/x", "description": "Clean up"}),
    ("Bash", {"command": "git push --force origin main"}),
    ("Write", {"file_path": "WS/.env", "content": "TOKEN=x\n"}),
    ("Edit", {"file_path": "WS/.env", "old_string": "A=1", "new_string": "A=2"}),
], ids=["rm", "force-push", "write-env", "edit-env"])
def test_the_guards_block_claude_codes_own_payloads(cc: Session, name: str,
                                                    tool_input: dict[str, Any]) -> None:
    """REF, "How a hook resolves": the matcher "Bash" and `if` "Bash(rm *)" select the hook
    for `rm -rf /tmp/build`; "Exit code 2 behavior per event": PreToolUse "Blocks the tool
    call"; "A hook that blocks by exiting 2 routes the same way as "deny": Claude sees the
    stderr message as the denial reason." For the file tools `tool_input.file_path` "is
    always absolute". Claude Code's "blocked": a deny."""
    the_three_guards(cc)
    cc.start()
    fixed = {k: v.replace("WS", str(cc.ws)) if isinstance(v, str) else v
             for k, v in tool_input.items()}
    answer = read_answer("PreToolUse", emit_from(cc, tool_call(cc, name, fixed)))
    assert answer.blocked and answer.permission == "deny", answer.describe()
    assert answer.reason, answer.describe()


def test_the_guards_let_ls_through(cc: Session) -> None:
    """REF: "If the command had been `npm test`, the if check would fail and block-rm.sh
    would never run"; "Exit code 0 with no output means the hook has no decision": `ls`
    is not blocked (and not approved: "staying silent doesn't approve it")."""
    the_three_guards(cc)
    cc.start()
    answer = read_answer("PreToolUse", emit_from(cc, tool_call(cc, "Bash", {"command": "ls"})))
    assert not answer.blocked and answer.permission is None, answer.describe()
    assert not answer.error, answer.describe()


# -- initd shim claude --------------------------------------------------------------------------


def shim(home: Path, *more: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INITD_", "CLAUDE_"))}
    return subprocess.run([*INITD, "shim", "claude", *more], capture_output=True, text=True,
                          timeout=60, env={**env, "HOME": str(home)})


def routed_events(settings: dict[str, Any]) -> set[str]:
    """The events whose every group routes to `initd emit --from claude` for everything."""
    found = set()
    for event, groups in (settings.get("hooks") or {}).items():
        for entry in groups:
            if entry.get("matcher") not in (None, "", "*"):
                continue
            for handler in entry.get("hooks", []):
                line = " ".join([handler.get("command", ""), *handler.get("args", [])])
                if handler.get("type") == "command" and "emit --from claude" in line:
                    found.add(event)
    return found


def test_the_printed_snippet_is_valid_settings_and_names_every_event(tmp_path: Path) -> None:
    """REF, "Configuration": hooks are "defined in JSON settings files" (event, matcher
    group, handlers); "Matcher patterns": ""*", "", or omitted: Match all". The snippet is
    valid by the SDK's `Settings` type, and routes each of the reference's 31 events, every
    occurrence, to `initd emit --from claude` (issue 37, interface 4)."""
    proc = shim(tmp_path)
    assert proc.returncode == 0, proc.stderr
    settings = json.loads(proc.stdout)
    assert schema_errors(settings, "Settings") == []
    assert routed_events(settings) == set(ALL_EVENTS)


def test_write_merges_into_the_users_settings(tmp_path: Path) -> None:
    """REF, "Hook locations": `~/.claude/settings.json` "All your projects". The interface:
    `--write` "merges it into the user's own config file ($HOME/...) without losing what
    is there": the user's other keys and hooks stay, and writing twice adds nothing."""
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    mine: dict[str, Any] = {"model": "opus", "permissions": {"deny": ["Read(./.env)"]},
            "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [
                {"type": "command", "command": "prettier --write ."}]}]}}
    path.write_text(json.dumps(mine))
    for _ in range(2):
        assert shim(tmp_path, "--write").returncode == 0
    settings = json.loads(path.read_text())
    assert settings["model"] == "opus" and settings["permissions"] == mine["permissions"]
    assert mine["hooks"]["PostToolUse"][0] in settings["hooks"]["PostToolUse"]
    assert routed_events(settings) == set(ALL_EVENTS)
    once = [g for g in settings["hooks"]["Stop"] if "--from claude" in json.dumps(g)]
    assert len(once) == 1, settings["hooks"]["Stop"]
    assert schema_errors(settings, "Settings") == []


def test_initd_does_not_run_its_own_shim_line_as_a_hook(cc: Session) -> None:
    """The shim lives in the user's settings, a file initd also reads (REF, "Hook
    locations"). Run as one of that file's hooks it would call initd again for the same
    event: initd's answer comes from the project's hook alone, once."""
    assert shim(cc.home, "--write").returncode == 0
    cc.project(hooks(Stop=group(command(cc.record("stop")))))
    cc.start()
    answer = read_answer("Stop", emit_from(cc, payload("Stop", cc)))
    assert cc.runs("stop") == 1 and not answer.blocked, answer.describe()
    assert results_of(cc.post("Stop", payload("Stop", cc)), "--from claude") == []
