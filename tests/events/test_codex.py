"""OpenAI Codex's pure parts (initd/events/codex/), by tables: initd's every answer to
Codex is valid by the event's output schema of @openai/codex@0.171.0 whatever the hooks
said, an event of another agent's reaches a Codex hook valid by Codex's input schema,
a Codex hook's answer means what Codex reads in it, and ``apply_patch`` patches are read
and written. The schemas are the vendored ones (tests/conformance/contracts/codex)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from initd.events.actions import ActionResult, Status
from initd.events.codex import answers, patch, shape
from initd.events.codex.names import EVENTS, NAMES
from initd.events.verdict import Verdict
from initd.events.wires.codex import WIRE
from initd.hooks import kinds
from tests.conformance.codex_hooks_support import payload, schema, validate

# what the hooks of an event may have said, one field at a time and all together
SAID: list[dict[str, Any]] = [
    {}, {"blocked": True, "reason": "no"}, {"blocked": True, "reason": ""},
    {"continue": False, "stopReason": "halt"}, {"aborted": True},
    {"additionalContext": "ctx"}, {"systemMessage": "note"}, {"feedback": "look"},
    {"permissionDecision": "allow", "updatedInput": {"command": "ls"}},
    {"permissionDecision": "allow", "updatedInput": {"file_path": "/w/.env", "content": "x"}},
    {"permissionDecision": "ask", "reason": "sure?"}, {"updatedOutput": {"x": 1}},
]
SAID.append({k: v for said in SAID for k, v in said.items()})


@pytest.mark.parametrize(("name", "said"), list(itertools.product(EVENTS, SAID)))
def test_every_answer_is_valid_by_codex_output_schema(name: str, said: dict[str, Any]
                                                      ) -> None:
    for tool in ("Bash", "apply_patch", "mcp__fs__read"):
        sent = payload(name, "/w", tool_name=tool, tool_input={"command": "x"}) if \
            name in ("PreToolUse", "PermissionRequest", "PostToolUse") else payload(name, "/w")
        reply = WIRE.reply(WIRE.inbound(sent, None), {"results": [], **said})
        assert reply.code == 0 and reply.stderr == ""
        if name == "SessionEnd":
            assert reply.stdout == ""
        elif reply.stdout:
            validate(json.loads(reply.stdout), schema(name, "output"))


CLAUDE = {"session_id": "s1", "transcript_path": "/t.jsonl", "cwd": "/w",
          "permission_mode": "plan", "hook_event_name": "X", "source": "clear",
          "tool_name": "Write", "tool_input": {"file_path": "/w/a.txt", "content": "hi\n"},
          "tool_use_id": "toolu_1", "tool_response": {"ok": True}, "prompt": "p",
          "trigger": "manual", "agent_id": "a1", "agent_type": "Explore", "reason": "exit",
          "stop_hook_active": True, "last_assistant_message": "done", "extra": [1]}


@pytest.mark.parametrize("name", EVENTS)
@pytest.mark.parametrize("given", [CLAUDE, {}, {**CLAUDE, "cwd": 3, "trigger": "soon",
                                               "tool_name": "Bash", "tool_input": None}])
def test_another_agents_event_is_valid_by_codex_input_schema(name: str,
                                                              given: dict[str, Any]) -> None:
    made = shape.outward(given, EVENTS[name], name, "sid", "/ws")
    validate(made, schema(name, "input"))
    assert made["hook_event_name"] == name and made["session_id"] == given.get(
        "session_id", "sid")


def test_claudes_file_tools_reach_codex_as_a_patch_and_back() -> None:
    made = shape.outward(CLAUDE, "pre_tool", "PreToolUse", "sid", "/ws")
    assert made["tool_name"] == "apply_patch"
    [back] = shape.inward({**made, "tool_name": "apply_patch"})
    assert back["tool_name"] == "Write" and back["tool_input"] == {
        "file_path": "/w/a.txt", "content": "hi\n"}
    edit = patch.build("MultiEdit", {"file_path": "/elsewhere/b.py", "edits": [
        {"old_string": "a\nb", "new_string": "c"}]}, "/w")
    assert edit is not None and "*** Update File: /elsewhere/b.py\n@@\n-a\n-b\n+c\n" in edit
    assert patch.parse(edit)[0].old == ("a", "b")


@pytest.mark.parametrize(("text", "files"), [
    ("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n", ["a"]),
    ("<<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n", ["a"]),
    ("*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End Patch", ["b"]),
    ("*** Begin Patch\n*** Update File: a\n@@\n *** Add File: b\n*** End Patch", ["a", "b"]),
    ("not a patch", []),
])
def test_a_patch_names_every_file_it_writes(text: str, files: list[str]) -> None:
    """Every header names a file, indented or not (a context line that looks like one
    too: shown to a guard, it costs a needless look, never a file not seen)."""
    assert [op.written for op in patch.parse(text)] == files


def result(code: int, out: str = "", err: str = "") -> ActionResult:
    return ActionResult(Status.OK if code == 0 else Status.FAILED, code, out, err)


def answer(event: str, code: int, out: object = "", err: str = "") -> Verdict:
    text = out if isinstance(out, str) else json.dumps(out)
    return answers.answer(result(code, text, err), "h", kinds.BY_NAME[EVENTS[event]], False)


@pytest.mark.parametrize(("event", "code", "out", "err", "blocks", "failed"), [
    ("PreToolUse", 2, "", "no", True, False),
    ("PreToolUse", 2, "", "", False, True),
    ("PreToolUse", 1, "", "no", False, True),
    ("PreToolUse", 0, {"decision": "block"}, "", False, True),
    ("PreToolUse", 0, {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                              "permissionDecision": "deny",
                                              "permissionDecisionReason": "x"}}, "", False, True),
    ("PreToolUse", 0, {"continue": True, "decision": "block", "reason": "x"}, "", True, False),
    ("PostToolUse", 2, "", "look", False, False),
    ("PostToolUse", 0, {"suppressOutput": True}, "", False, True),
    ("UserPromptSubmit", 0, {"decision": "block", "reason": "x", "continue": None}, "", True,
     False),
    ("Stop", 0, "plain", "", False, True),
    ("PreCompact", 0, {"decision": "block", "reason": "x"}, "", False, True),
    ("SessionEnd", 0, {"anything": 1}, "", False, False),
    ("Interrupt", 0, {"systemMessage": "x", "continue": False}, "", False, True),
])
def test_what_codex_reads_in_an_answer(event: str, code: int, out: object, err: str,
                                       blocks: bool, failed: bool) -> None:
    said = answer(event, code, out, err)
    assert said.blocks is blocks and (said.status == Status.FAILED) is failed, said


def test_a_hook_that_could_not_run_blocks_only_when_initd_failed() -> None:
    event = kinds.BY_NAME["pre_tool"]
    mine = answers.answer(ActionResult(Status.ERROR, error="timed out"), "h", event, False)
    initds = answers.answer(ActionResult(Status.ERROR, error="E2BIG", fails_closed=True),
                            "h", event, False)
    assert not mine.blocks and initds.blocks and initds.permission == "deny"


def test_every_event_has_its_name_both_ways() -> None:
    assert {NAMES[event] for event in EVENTS.values()} == set(EVENTS)
    assert all(kinds.resolve(event) is not None for event in EVENTS.values())


def test_the_docs_table_of_events_is_the_code() -> None:
    """docs/codex.md's "Events" table: each Codex event and initd's, as names.EVENTS has
    them, and the matcher column as names.MATCHED."""
    from pathlib import Path

    from initd.events.codex.names import MATCHED

    text = (Path(__file__).resolve().parents[2] / "docs" / "codex.md").read_text()
    section = text.split("\n## Events\n", 1)[1].split("\n## ", 1)[0]
    rows = [[cell.strip().strip("`") for cell in line.strip("|").split("|")]
            for line in section.splitlines() if line.startswith("| `")]
    assert {row[0]: row[1] for row in rows} == EVENTS
    assert {row[1] for row in rows if not row[2].startswith("(")} == set(MATCHED)


def test_hooks_state_is_no_hook_and_no_second_form(tmp_path: Any) -> None:
    """``[hooks.state."<key>"]`` (Codex's record of a person's review) beside a hooks.json:
    one hook, and no warning that the layer has hooks in both forms."""
    from initd.events.dialects import codex

    folder = tmp_path / "ws" / ".codex"
    folder.mkdir(parents=True)
    (folder / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "true"}]}]}}))
    (folder / "config.toml").write_text('[hooks.state."x:stop:0:0"]\nenabled = false\n')
    found = codex.load(str(tmp_path / "ws"), str(tmp_path / "home"))
    assert [h.event for h in found.hooks] == ["stop"] and found.problems == []
