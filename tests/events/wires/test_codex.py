"""Codex's wire (initd/events/wires/codex.py): initd's every answer to Codex is valid by
the event's output schema of @openai/codex@0.171.0 (vendored:
tests/conformance/contracts/codex), whatever the hooks said."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from initd.events.codex.names import EVENTS
from initd.events.wires.codex import WIRE
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
