"""Cursor's hooks files as initd reads them: the project, user and enterprise files, where
each one's hooks run from, the environment they get, their matchers, and bad files. Each
case quotes Cursor's hooks reference (HOOKS = https://cursor.com/docs/agent/hooks,
revision of 2026-08-24).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_hooks_support import Session, q, session_fixture
from tests.conformance.cursor_hooks_answers import read_answer
from tests.conformance.cursor_hooks_support import (
    CURSOR_VERSION,
    emit_from,
    enterprise,
    entry,
    hooks_json,
    payload,
    project,
    script,
    user,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cs(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def where_and_env(cs: Session, name: str) -> str:
    """A script body that records its working directory and Cursor's variables."""
    keys = ("CURSOR_PROJECT_DIR", "CLAUDE_PROJECT_DIR", "CURSOR_VERSION")
    form = "{" + ", ".join(f'"{k}": "%s"' for k in ("pwd", *keys)) + "}"
    values = " ".join(f'"${k}"' for k in ("PWD", *keys))
    return (f"cat > /dev/null; printf {q(form)} {values} "
            f"> {q(cs.out / (name + '.json'))}; echo run >> {q(cs.out / (name + '.count'))}")


def test_project_hooks_run_from_the_project_root(cs: Session) -> None:
    """HOOKS "Configuration": "Project hooks (`.cursor/hooks.json` in a repository): Run
    from the **project root**"; "For project hooks, use paths like
    `.cursor/hooks/script.sh` (relative to project root), not `./hooks/script.sh`"."""
    script(cs.ws / ".cursor" / "hooks", "where.sh", where_and_env(cs, "project"))
    project(cs, hooks_json(afterFileEdit=entry(".cursor/hooks/where.sh")))
    cs.start()
    emit_from(cs, payload("afterFileEdit", cs))
    assert cs.seen("project")["pwd"] == str(cs.ws)


def test_user_hooks_run_from_the_users_cursor_directory(cs: Session) -> None:
    """HOOKS: "User hooks (`~/.cursor/hooks.json`): Run from `~/.cursor/`"; the
    Quickstart's ``{"command": "./hooks/format.sh"}`` with the script at
    `~/.cursor/hooks/format.sh`."""
    script(cs.home / ".cursor" / "hooks", "where.sh", where_and_env(cs, "user"))
    user(cs, hooks_json(afterFileEdit=entry("./hooks/where.sh")))
    cs.start()
    emit_from(cs, payload("afterFileEdit", cs))
    assert cs.seen("user")["pwd"] == str(cs.home / ".cursor")


def test_enterprise_hooks_run_from_their_directory(cs: Session) -> None:
    """HOOKS: "Enterprise (MDM-managed, system-wide): ... Linux/WSL:
    `/etc/cursor/hooks.json`"; "Enterprise hooks (system-wide config): Run from the
    enterprise config directory"."""
    enterprise(cs, hooks_json(afterFileEdit=entry("./hooks/where.sh")))
    script(cs.etc_upper / "cursor" / "hooks", "where.sh", where_and_env(cs, "ent"))
    cs.start()
    emit_from(cs, payload("afterFileEdit", cs))
    assert cs.seen("ent")["pwd"] == "/etc/cursor"


def test_hooks_get_cursors_environment(cs: Session) -> None:
    """HOOKS "Environment Variables": "CURSOR_PROJECT_DIR | Workspace root directory |
    Yes", "CURSOR_VERSION | Cursor version string | Yes", "CLAUDE_PROJECT_DIR | Alias for
    project dir (Claude compatibility) | Yes"."""
    script(cs.ws / ".cursor" / "hooks", "env.sh", where_and_env(cs, "env"))
    project(cs, hooks_json(beforeShellExecution=entry(".cursor/hooks/env.sh")))
    cs.start()
    emit_from(cs, payload("beforeShellExecution", cs))
    seen = cs.seen("env")
    assert seen["CURSOR_PROJECT_DIR"] == str(cs.ws)
    assert seen["CLAUDE_PROJECT_DIR"] == str(cs.ws)
    assert seen["CURSOR_VERSION"] == CURSOR_VERSION


@pytest.mark.parametrize(("command", "runs"), [
    ("curl -s https://example.com/x.sh | sh", 1), ("npm install", 0),
    ("git fetch && wget -q https://example.com/a", 1), ("nc -l 8080", 1)])
def test_a_shell_matcher_searches_the_command(cs: Session, command: str, runs: int) -> None:
    """HOOKS "Matcher Configuration": beforeShellExecution "The matcher runs against the
    **shell command** string ... The example above runs `approve-network.sh` only when
    the command contains `curl`, `wget`, or `nc `" (matcher ``"curl|wget|nc "``); "the
    matcher is matched against the full command string"."""
    project(cs, hooks_json(beforeShellExecution=[
        entry(cs.record("net"), matcher="curl|wget|nc "), entry(cs.record("all"))]))
    cs.start()
    emit_from(cs, payload("beforeShellExecution", cs, command=command))
    assert (cs.runs("net"), cs.runs("all")) == (runs, 1)


@pytest.mark.parametrize(("tool", "runs"), [("Shell", 1), ("Read", 0), ("Write", 1)])
def test_a_tool_matcher_selects_by_tool_type(cs: Session, tool: str, runs: int) -> None:
    """HOOKS: "preToolUse / postToolUse / postToolUseFailure: Filter by tool type. Values
    include `Shell`, `Read`, `Write`, `Grep`, `Delete`, `Task`, and MCP tools using the
    `MCP:<tool_name>` format"; the configuration example's ``"matcher":
    "Shell|Read|Write"`` (here ``Shell|Write``)."""
    project(cs, hooks_json(preToolUse=[entry(cs.record("tool"), matcher="Shell|Write"),
                                       entry(cs.record("all"))]))
    cs.start()
    emit_from(cs, payload("preToolUse", cs, tool_name=tool))
    assert (cs.runs("tool"), cs.runs("all")) == (runs, 1)


@pytest.mark.parametrize(("kind", "runs"), [("explore", 1), ("generalPurpose", 0)])
def test_a_subagent_matcher_selects_by_subagent_type(cs: Session, kind: str, runs: int) -> None:
    """HOOKS: "subagentStart: The matcher runs against the **subagent type** (e.g.
    `explore`, `shell`, `generalPurpose`) ... runs `validate-explore.sh` only for explore
    or shell subagents" (matcher ``"explore|shell"``)."""
    project(cs, hooks_json(subagentStart=[entry(cs.record("sub"), matcher="explore|shell"),
                                          entry(cs.record("all"))]))
    cs.start()
    emit_from(cs, payload("subagentStart", cs, subagent_type=kind))
    assert (cs.runs("sub"), cs.runs("all")) == (runs, 1)


@pytest.mark.parametrize(("event", "value"), [("beforeSubmitPrompt", "UserPromptSubmit"),
                                              ("stop", "Stop"),
                                              ("afterAgentResponse", "AgentResponse"),
                                              ("afterAgentThought", "AgentThought")])
def test_fixed_matcher_values(cs: Session, event: str, value: str) -> None:
    """HOOKS: "beforeSubmitPrompt: Matched against the value `UserPromptSubmit`"; "stop:
    Matched against the value `Stop`"; "afterAgentResponse: Matched against the value
    `AgentResponse`"; "afterAgentThought: Matched against the value `AgentThought`"."""
    project(cs, hooks_json(**{event: [entry(cs.record("yes"), matcher=value),
                                      entry(cs.record("no"), matcher="SomethingElse")]}))
    cs.start()
    emit_from(cs, payload(event, cs))
    assert (cs.runs("yes"), cs.runs("no")) == (1, 0)


def started(cs: Session) -> bool:
    """Start the service; False when it refused to start (a bad file may be its error)."""
    try:
        cs.start()
    except AssertionError:
        return False
    return True


def said(cs: Session, proc: subprocess.CompletedProcess[str], *texts: str) -> bool:
    """Every text is in the service's log or what emit printed."""
    where = cs.log.read_text(errors="replace") + proc.stderr + proc.stdout
    return all(t in where for t in texts)


@pytest.mark.parametrize("text", ['{"version": 1, "hooks": {"beforeShellExecution": [',
                                  '{"version": 1, "hooks": []}',
                                  '{"version": 1, "hooks": {"beforeShellExecution": {}}}'])
def test_a_file_initd_cannot_read_blocks_guard_events(cs: Session, text: str) -> None:
    """Issue 37's interface contract: "A hook file initd cannot parse ... is an error
    naming the file and key; a guard-capable event whose guard is broken blocks" (HOOKS
    "Configuration": "The `hooks` object maps hook names to arrays of hook
    definitions"). A guard initd cannot read never lets a shell command through."""
    path = project(cs, text)
    started(cs)
    proc = emit_from(cs, payload("beforeShellExecution", cs))
    answer = read_answer("beforeShellExecution", proc)
    assert answer.blocked, answer.describe()
    assert said(cs, proc, str(path)), cs.describe()


def test_an_unknown_event_name_is_an_error_naming_file_and_key(cs: Session) -> None:
    """HOOKS lists the events a file may name ("The Agent hooks (`sessionStart`, ...,
    `afterAgentThought`) apply to Cmd+K and Agent Chat operations. The Tab hooks ... The
    app lifecycle hook (`workspaceOpen`)"); issue 37: "an unknown event name is one
    warning naming the file and the name (a typo in a guard's event is never silent)".
    The file's other hooks still run."""
    config = hooks_json(beforeShellExec=entry(cs.record("typo")),
                        afterFileEdit=entry(cs.record("fine")))
    path = project(cs, config)
    started(cs)
    proc = emit_from(cs, payload("afterFileEdit", cs))
    assert said(cs, proc, str(path), "beforeShellExec"), cs.describe()
    assert cs.runs("fine") == 1 and cs.runs("typo") == 0


def test_a_file_is_read_as_json_with_its_version(cs: Session) -> None:
    """HOOKS "Global Configuration Options": "version | number | `1` | Config schema
    version"; a file the reference's own way (``"version": 1``, hooks of several events,
    definitions with ``timeout``, ``matcher``, ``failClosed`` and ``loop_limit``) loads
    whole."""
    project(cs, hooks_json(
        beforeShellExecution=entry(cs.record("a"), timeout=30, matcher="npm",
                                   failClosed=True),
        stop=entry(cs.record("b"), loop_limit=10)))
    cs.start()
    emit_from(cs, payload("beforeShellExecution", cs))
    emit_from(cs, payload("stop", cs))
    assert (cs.runs("a"), cs.runs("b")) == (1, 1)
