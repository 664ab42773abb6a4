"""VS Code's agent hooks (the Local harness), the events and their input: every event of
the reference reaches the hooks of a VS Code hook file through ``initd emit --from
vscode``, with the fields VS Code writes (snake_case common fields, the tools' own
camelCase arguments in tool_input), unknown fields untouched, and the event named by the
payload or by EVENT. Each case quotes its passage (vscode_hooks_support names the
references and their revisions).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_hooks_support import session_fixture
from tests.conformance.vscode_hooks_answers import assert_valid, blocked, read_answer
from tests.conformance.vscode_hooks_support import (
    EDIT,
    EVENTS,
    FIELDS,
    READ,
    VSCode,
    cmd,
    edit,
    exits,
    payload,
    schema,
    shell,
    tool,
    validate,
    vhooks,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def vs(tmp_path: Path) -> Iterator[VSCode]:
    for session in session_fixture(tmp_path):
        yield VSCode(session)


def recorder(vs: VSCode, name: str = "seen") -> dict[str, object]:
    return cmd(vs.s.record(name))


@pytest.mark.parametrize("event", EVENTS)
def test_every_event_reaches_a_hook_with_its_fields(vs: VSCode, event: str) -> None:
    """LOCAL, "Local hook lifecycle events" (SessionStart, UserPromptSubmit, PreToolUse,
    PostToolUse, PreCompact, SubagentStart, SubagentStop, Stop): "When an event fires, the
    Local harness passes a JSON object to the command through standard input (stdin)."
    LOCAL, "Common input": "Every Local hook receives a JSON object on standard input
    (stdin). The object contains these common fields in addition to the fields for the
    event: timestamp, cwd, session_id, hook_event_name, transcript_path", and each event's
    "Input" (e.g. Stop: `{"stop_hook_active": false}`)."""
    vs.workspace("record", vhooks(**{event: recorder(vs)}))
    vs.s.start()
    sent = payload(event, cwd=str(vs.s.ws))
    validate(sent, schema("hook-input", event))
    answer = read_answer(event, vs.emit(sent))
    assert_valid(answer)
    seen = vs.s.seen("seen")
    assert seen["hook_event_name"] == event
    for name, value in FIELDS[event].items():
        assert seen[name] == value, name
    assert seen["session_id"] == sent["session_id"]
    validate(seen, schema("hook-input", event))


def test_the_event_is_the_payloads_own_hook_event_name(vs: VSCode) -> None:
    """Brief, interface (1): "The event is the payload's own event-name field (as the
    agent names it)". LOCAL: `hook_event_name` "Hook event name, such as `PreToolUse`"."""
    vs.workspace("record", vhooks(PreToolUse=recorder(vs, "pre"),
                                  PostToolUse=recorder(vs, "post")))
    vs.s.start()
    vs.emit(payload("PostToolUse"))
    assert vs.s.runs("post") == 1 and vs.s.runs("pre") == 0


def test_an_event_given_on_the_command_line_wins(vs: VSCode) -> None:
    """Brief, interface (1): "EVENT, when given, wins." The payload says PostToolUse, the
    line says PreToolUse: the PreToolUse hook runs (and denies: exit 2, LOCAL "Exit
    codes")."""
    vs.workspace("deny", vhooks(PreToolUse=cmd(vs.s.record("pre") + "; echo no >&2; exit 2"),
                                PostToolUse=recorder(vs, "post")))
    vs.s.start()
    answer = read_answer("PreToolUse", vs.emit(payload("PostToolUse"), event="PreToolUse"))
    assert blocked(answer)
    assert vs.s.runs("pre") == 1 and vs.s.runs("post") == 0


def test_the_camel_case_spelling_of_the_june_revision_is_read_too(vs: VSCode) -> None:
    """HOOKS_JUNE, "Common input fields": `{"timestamp": ..., "cwd": ..., "sessionId":
    "session-identifier", "hookEventName": "PreToolUse", "transcript_path": ...}` (VS
    Code builds of that revision send camelCase; LOCAL of September spells them
    session_id and hook_event_name). A payload in that spelling is its event too."""
    vs.workspace("record", vhooks(Stop=recorder(vs)))
    vs.s.start()
    old = {"timestamp": "2026-02-09T10:30:00.000Z", "cwd": str(vs.s.ws),
           "sessionId": "session-identifier", "hookEventName": "Stop",
           "transcript_path": "/path/to/transcript.json", "stop_hook_active": False}
    assert_valid(read_answer("Stop", vs.emit(old)))
    assert vs.s.seen("seen")["stop_hook_active"] is False


def test_unknown_fields_reach_the_hook_untouched(vs: VSCode) -> None:
    """Brief, interface (2): "Unknown payload fields reach hooks untouched." SRC
    chatHookService.ts: newer builds add a `model` common field (`executeHook(...,
    model?)`: "included as a common field in every hook input"); LOCAL: tool_input is
    "Arguments for the tool call"."""
    vs.workspace("record", vhooks(PreToolUse=recorder(vs)))
    vs.s.start()
    sent = shell("ls -la")
    sent["model"] = "claude-sonnet-4-6"
    sent["x_vendor"] = {"nested": [1, {"a": None}]}
    sent["tool_input"]["requestUnsandboxedExecution"] = True
    vs.emit(sent)
    seen = vs.s.seen("seen")
    assert seen["model"] == "claude-sonnet-4-6"
    assert seen["x_vendor"] == {"nested": [1, {"a": None}]}
    assert seen["tool_input"] == sent["tool_input"]


def test_tool_input_keeps_the_tools_camel_case_arguments(vs: VSCode) -> None:
    """HOOKS_JUNE, FAQ: "Claude Code uses snake_case for tool input properties (for
    example, `tool_input.file_path`), while VS Code tools use camelCase (for example,
    `tool_input.filePath`)." and "VS Code uses tool names like `create_file` and
    `replace_string_in_file`." A VS Code hook gets VS Code's own names back."""
    vs.workspace("record", vhooks(PreToolUse=recorder(vs)))
    vs.s.start()
    sent = edit(str(vs.s.ws / "src" / "a.ts"), "let a = 1", "const a = 1")
    vs.emit(sent)
    seen = vs.s.seen("seen")
    assert seen["tool_name"] == EDIT
    assert seen["tool_input"] == sent["tool_input"]
    assert "file_path" not in seen["tool_input"]


def test_a_read_reaches_pre_tool_use_hooks(vs: VSCode) -> None:
    """LOCAL, PreToolUse: "The `PreToolUse` hook fires before the Local agent invokes a
    tool" (any tool: read_file {filePath, startLine, endLine}, SRC readFileTool)."""
    vs.workspace("record", vhooks(PreToolUse=recorder(vs)))
    vs.s.start()
    sent = tool(READ, {"filePath": str(vs.s.ws / "README.md"), "startLine": 1,
                       "endLine": 40})
    assert not blocked(read_answer("PreToolUse", vs.emit(sent)))
    assert vs.s.seen("seen")["tool_input"]["filePath"] == str(vs.s.ws / "README.md")


def test_a_hook_runs_in_the_workspace_root_by_default(vs: VSCode) -> None:
    """LOCAL, "Command properties": `cwd` "Working directory, relative to the repository
    root." SRC hookSchema.ts resolveHookCommand: no cwd is the workspace root
    (`cwdUri = workspaceRootUri`)."""
    where = vs.s.out / "pwd"
    vs.workspace("pwd", vhooks(SessionStart=cmd(f"cat >/dev/null; pwd > {where}")))
    vs.s.start()
    vs.emit(payload("SessionStart", cwd=str(vs.s.ws)))
    assert Path(where.read_text().strip()).resolve() == vs.s.ws.resolve()


def test_hooks_of_an_event_run_one_after_the_other(vs: VSCode) -> None:
    """SRC chatHookService.ts executeHook: `for (const hookCommand of hookCommands) { ...
    await this._hookExecutor.executeCommand(...) }`: one at a time, in order. Two hooks
    that each fail at once if the other is running never see each other."""
    lock = vs.s.out / "running"
    body = (f"cat >/dev/null; if [ -e {lock} ]; then echo overlap >> {vs.s.out}/overlap; "
            f"fi; touch {lock}; sleep 0.5; rm -f {lock}")
    ran = f"; echo run >> {vs.s.out}/ran.count"
    vs.workspace("a", vhooks(PreToolUse=[cmd(body + ran), cmd(body + " " + ran)]))
    vs.s.start()
    vs.emit(shell("ls"))
    assert vs.s.runs("ran") == 2
    assert not (vs.s.out / "overlap").exists()


def test_pre_compact_cannot_block(vs: VSCode) -> None:
    """LOCAL, PreCompact: "The hook supports the common output." SRC (the summarizer's
    executePreCompactHook): a hook's error is only logged (`PreCompact hook error`);
    compaction goes on. The answer is no block and no stop."""
    vs.workspace("pc", vhooks(PreCompact=cmd(
        f"echo run >> {vs.s.out}/ran.count; " + exits(2, "do not compact"))))
    vs.s.start()
    answer = read_answer("PreCompact", vs.emit(payload("PreCompact")))
    assert vs.s.runs("ran") == 1
    assert answer.decision is None and not answer.stop
    assert_valid(answer)
