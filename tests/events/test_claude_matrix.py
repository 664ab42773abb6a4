"""docs/claude-code.md's conformance matrix is the code's: every Claude Code event once,
in the reference's order, with initd's event, whether it blocks, its matcher's field, the
answer fields initd hands back and where ``continue`` is not read; and the handler table
names every handler field of the Agent SDK's ``Settings`` type (the vendored schema of
@anthropic-ai/claude-agent-sdk@0.3.240, tests/conformance/contracts/claude)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from initd.events.claude import matchers, relayed
from initd.events.claude.names import EVENTS, NO_CONTINUE
from initd.hooks import kinds

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "claude-code.md"
SCHEMA = (ROOT / "tests" / "conformance" / "contracts" / "claude" /
          "claude-agent-sdk-0.3.240.hooks.schema.json")
STATUSES = ("✓", "deviation", "not yet")


def rows(marker: str) -> list[list[str]]:
    text = PAGE.read_text(encoding="utf-8")
    part = text[text.index(f"<!-- {marker}:begin -->"):text.index(f"<!-- {marker}:end -->")]
    lines = [line for line in part.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]


def test_every_event_is_a_row_that_says_what_the_code_does() -> None:
    matrix = rows("claude-matrix")
    assert [row[0].strip("`") for row in matrix] == list(_reference_order())
    for name, event, blocks, matcher, _, answer, status in matrix:
        ours = EVENTS[name.strip("`")]
        assert event == f"`{ours}`", name
        assert blocks.startswith("yes") is kinds.BY_NAME[ours].blockable, name
        field = matchers.FIELDS.get(ours)
        assert (f"`{field}`" in matcher) if field else matcher == "none", name
        for given in relayed.FIELDS.get(ours, {}):
            assert f"`{given}`" in answer, (name, given)
        assert ("no `continue`" in answer) is (ours in NO_CONTINUE), name
        assert status.startswith(STATUSES), (name, status)


def test_every_handler_field_of_the_sdk_has_a_status() -> None:
    table = rows("claude-handlers")
    named = {found for field, _ in table for found in re.findall(r"`([^`]+)`", field)}
    handlers = json.loads(SCHEMA.read_text())["definitions"]["Settings"]["properties"][
        "hooks"]["additionalProperties"]["items"]["properties"]["hooks"]["items"]["anyOf"]
    fields = {name for handler in handlers for name in handler["properties"]} - {"type"}
    types = {f"type: {handler['properties']['type']['const']}" for handler in handlers}
    assert fields | types | {"matcher"} <= named, sorted(fields | types - named)
    assert all(status.startswith(STATUSES) for _, status in table), table


def _reference_order() -> list[str]:
    """The reference's table "The table below summarizes when each event fires"."""
    return ["SessionStart", "Setup", "UserPromptSubmit", "UserPromptExpansion", "PreToolUse",
            "PermissionRequest", "PermissionDenied", "PostToolUse", "PostToolUseFailure",
            "PostToolBatch", "Notification", "MessageDisplay", "SubagentStart",
            "SubagentStop", "TaskCreated", "TaskCompleted", "Stop", "StopFailure",
            "TeammateIdle", "InstructionsLoaded", "ConfigChange", "CwdChanged",
            "DirectoryAdded", "FileChanged", "WorktreeCreate", "WorktreeRemove",
            "PreCompact", "PostCompact", "Elicitation", "ElicitationResult", "SessionEnd"]
