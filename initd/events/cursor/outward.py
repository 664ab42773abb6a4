"""An event of another agent's (or ``initd emit``'s) as a Cursor hook of one of Cursor's
events reads it: the reference's common fields (https://cursor.com/docs/agent/hooks,
"Common schema": ``conversation_id``, ``generation_id``, ``model``, ``hook_event_name``,
``cursor_version``, ``workspace_roots``, ``user_email``, ``transcript_path``), then the
payload's fields that are not Claude Code's words for what Cursor says otherwise, then
the event's own fields of its "// Input" example, from initd's shape (inward.py the
other way): a ``Bash`` call is beforeShellExecution's ``command`` and ``cwd``, an
``Edit`` afterFileEdit's ``edits``, a ``Task`` subagentStart's ``subagent_type`` and
``task``. A value initd does not have is the payload's own under Cursor's name, else a
neutral one (``""``, ``false``, ``0``, ``[]``). beforeReadFile gets no ``content``: initd
does not read the file for the hook."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from initd.events.actions import Call
from initd.events.cursor.names import cursor_tool

Build = Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]
# initd's (Claude Code's) words that a Cursor hook reads otherwise
CLAUDE_ONLY = ("hook_event_name", "tool_name", "tool_input", "tool_response", "error",
               "stop_hook_active", "last_assistant_message", "agent_type", "permission_mode",
               "duration_ms", "source")


def outward(name: str, call: Call) -> dict[str, Any]:
    """initd's event (``call.payload``) as the Cursor event ``name``'s input."""
    p = call.payload
    conversation = _text(p, "conversation_id") or _text(p, "session_id") or str(
        call.variables.get("SESSION") or "")
    common: dict[str, Any] = {
        "conversation_id": conversation, "generation_id": _text(p, "generation_id"),
        "model": _text(p, "model"), "hook_event_name": name,
        "cursor_version": _text(p, "cursor_version"),
        "workspace_roots": p.get("workspace_roots") or [call.workspace],
        "user_email": p.get("user_email"), "transcript_path": p.get("transcript_path")}
    rest = {k: v for k, v in p.items() if k not in CLAUDE_ONLY}
    build = BUILDS.get(name)
    own = build(p, {**common, "cwd": _text(p, "cwd") or call.workspace}) if build else {}
    return {**common, **rest, **own, "hook_event_name": name}


def _text(p: Mapping[str, Any], key: str) -> str:
    value = p.get(key)
    return value if isinstance(value, str) else ""


def _input(p: Mapping[str, Any]) -> dict[str, Any]:
    given = p.get("tool_input")
    return dict(given) if isinstance(given, Mapping) else {}


def _json(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _tool(p: Mapping[str, Any], c: Mapping[str, Any]) -> dict[str, Any]:
    """preToolUse's input (postToolUse's and postToolUseFailure's have more)."""
    given = _input(p)
    tool = cursor_tool(p.get("tool_name"))
    if tool == "Shell":
        given.setdefault("working_directory", c["cwd"])
    if tool == "Write" and "content" in given and "contents" not in given:
        given["contents"] = given.pop("content")
    out = {"tool_name": tool, "tool_input": given, "tool_use_id": _text(p, "tool_use_id"),
           "cwd": c["cwd"]}
    if "tool_response" in p:
        out["tool_output"] = _json(p["tool_response"])
    if "error" in p:
        out.update(error_message=_text(p, "error") or _json(p["error"]),
                   failure_type=p.get("failure_type", "error"),
                   is_interrupt=p.get("is_interrupt") is True)
    if "tool_response" in p or "error" in p:
        out["duration"] = p.get("duration", p.get("duration_ms", 0))
    return out


def _shell(p: Mapping[str, Any], c: Mapping[str, Any]) -> dict[str, Any]:
    out = {"command": _input(p).get("command", ""), "cwd": c["cwd"],
           "sandbox": p.get("sandbox") is True}
    response = p.get("tool_response")
    if response is not None:
        if isinstance(response, Mapping):
            text = "".join(str(response.get(k) or "") for k in ("stdout", "stderr"))
        else:
            text = str(response)
        out.update(output=text, duration=p.get("duration", p.get("duration_ms", 0)))
    return out


def _mcp(p: Mapping[str, Any], c: Mapping[str, Any]) -> dict[str, Any]:
    tool = str(p.get("tool_name") or "")
    parts = tool.split("__", 2) if tool.startswith("mcp__") else ["", "", tool]
    out: dict[str, Any] = {"tool_name": parts[-1], "tool_input": json.dumps(_input(p)),
                           "mcp_server_name": p.get("mcp_server_name") or parts[1]}
    if "tool_response" in p:
        out.update(result_json=_json(p["tool_response"]),
                   duration=p.get("duration", p.get("duration_ms", 0)))
    return out


def _read(p: Mapping[str, Any], c: Mapping[str, Any]) -> dict[str, Any]:
    return {"file_path": _input(p).get("file_path", ""),
            "attachments": p.get("attachments") or []}


def _edit(p: Mapping[str, Any], c: Mapping[str, Any]) -> dict[str, Any]:
    given = _input(p)
    edits = given.get("edits")
    if not isinstance(edits, list):
        if "content" in given and "old_string" not in given:
            edits = [{"old_string": "", "new_string": given["content"]}]
        else:
            edits = [{"old_string": given.get("old_string", ""),
                      "new_string": given.get("new_string", "")}]
    return {"file_path": given.get("file_path", ""), "edits": edits}


def _subagent(p: Mapping[str, Any], c: Mapping[str, Any]) -> dict[str, Any]:
    given = _input(p)
    call_id = _text(p, "tool_use_id")
    return {"subagent_id": call_id, "subagent_type": given.get("subagent_type", ""),
            "task": given.get("prompt") or given.get("description") or "",
            "parent_conversation_id": c["conversation_id"], "tool_call_id": call_id,
            "subagent_model": given.get("model") or "", "is_parallel_worker": False}


def _stopped(p: Mapping[str, Any], c: Mapping[str, Any]) -> dict[str, Any]:
    count = p.get("loop_count")
    return {"status": p.get("status", "completed"), "loop_count": count if isinstance(
        count, int) else int(p.get("stop_hook_active") is True)}


def _subagent_stop(p: Mapping[str, Any], c: Mapping[str, Any]) -> dict[str, Any]:
    return {**_stopped(p, c), "subagent_type": _text(p, "agent_type"),
            "task": _text(p, "task"), "description": _text(p, "description"),
            "summary": _text(p, "last_assistant_message"),
            "agent_transcript_path": p.get("agent_transcript_path")}


def _session(p: Mapping[str, Any], c: Mapping[str, Any]) -> dict[str, Any]:
    return {"session_id": c["conversation_id"],
            "is_background_agent": p.get("is_background_agent") is True}


def _ended(p: Mapping[str, Any], c: Mapping[str, Any]) -> dict[str, Any]:
    reasons = ("completed", "aborted", "error", "window_close", "user_close")
    reason = p.get("reason")
    return {**_session(p, c), "reason": reason if reason in reasons else "completed",
            "duration_ms": p.get("duration_ms", 0), "final_status": "completed"}


BUILDS: dict[str, Build] = {
    "preToolUse": _tool, "postToolUse": _tool, "postToolUseFailure": _tool,
    "beforeShellExecution": _shell, "afterShellExecution": _shell,
    "beforeMCPExecution": _mcp, "afterMCPExecution": _mcp, "beforeReadFile": _read,
    "afterFileEdit": _edit, "subagentStart": _subagent, "subagentStop": _subagent_stop,
    "stop": _stopped, "sessionStart": lambda p, c: {**_session(p, c), "composer_mode": "agent"},
    "sessionEnd": _ended,
    "beforeSubmitPrompt": lambda p, c: {"prompt": _text(p, "prompt"),
                                        "attachments": p.get("attachments") or []},
    "preCompact": lambda p, c: {"trigger": p.get("trigger", "auto")}}
