"""What a Claude Code hook reads on stdin: the event as the agent sent it, over the common
input fields every Claude Code hook may rely on (its hooks reference, "Common input
fields"), as initd knows them when the agent leaves them out."""

from __future__ import annotations

import os
import re
from typing import Any

from initd.events.actions import Call

# The events whose input example in the reference carries permission_mode ("Not all events
# receive this field. Check the JSON example in each hook event section.")
PERMISSION_MODE_EVENTS = ("pre_tool", "post_tool", "post_tool_failure", "user_prompt_submit",
                          "stop", "subagent_stop", "teammate_idle", "task_completed")


def stdin(call: Call, name: str) -> dict[str, Any]:
    """The payload over the common fields (what the agent sent wins); ``name`` is the
    event's name in Claude Code's words (``PreToolUse``)."""
    return {**common_fields(call, name), **call.payload}


def common_fields(call: Call, name: str) -> dict[str, object]:
    """The common input fields: a guard that reads ``d["transcript_path"]`` never crashes
    (and passes) on a missing key. The transcript is where Claude Code keeps it
    (``~/.claude/projects/<cwd, each other character a "-">/<session>.jsonl``); the mode
    is "default"."""
    session = str(call.variables.get("SESSION") or "")
    home = call.env.get("HOME") or os.path.expanduser("~")
    project = re.sub(r"[^A-Za-z0-9]", "-", call.workspace)
    fields: dict[str, object] = {
        "session_id": session,
        "transcript_path": os.path.join(home, ".claude", "projects", project,
                                        f"{session}.jsonl"),
        "cwd": call.workspace, "hook_event_name": name}
    if call.event in PERMISSION_MODE_EVENTS:
        fields["permission_mode"] = "default"
    return fields
