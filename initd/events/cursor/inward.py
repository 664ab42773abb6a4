"""A Cursor payload in initd's shape (Claude Code's: events/wire.py), every field it does
not translate kept as Cursor sent it.

- the common fields: ``hook_event_name`` is Claude Code's name of the event (``PreToolUse``
  for ``beforeShellExecution``), ``session_id`` the conversation's (Cursor's
  ``session_id`` "same as conversation_id"), ``cwd`` the first workspace root when the
  event has none of its own;
- the events of one tool are that tool's call: ``beforeShellExecution``'s ``command`` is
  ``Bash``'s ``tool_input.command``, ``beforeReadFile``'s ``file_path`` a ``Read``'s,
  ``afterFileEdit``'s edits an ``Edit``'s, an MCP tool's ``tool_input`` (a JSON string) is
  ``mcp__SERVER__TOOL``'s object, ``subagentStart`` a ``Task`` (``subagent_type``,
  ``prompt``); their outputs are ``tool_response``;
- preToolUse's tools in Claude Code's names (Cursor's third-party hooks page, "Tool Name
  Mapping": Bash is Shell, Edit and Write are Write): ``Shell`` is ``Bash``, ``Write`` a
  ``Write`` when it carries the file's whole content, else an ``Edit``;
- ``stop`` and ``subagentStop`` say ``stop_hook_active`` when Cursor's ``loop_count`` says
  a follow-up was submitted already; subagentStop's ``subagent_type`` is ``agent_type``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from initd.events.claude.names import NAMES as CLAUDE
from initd.events.cursor.names import EDIT, EVENTS, READ, SHELL, TASK, WRITE

Shaping = Callable[[dict[str, Any]], None]


def inward(name: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """Cursor's ``payload`` of its event ``name`` in initd's shape."""
    out = dict(payload)
    out["hook_event_name"] = CLAUDE.get(EVENTS[name], name)
    if not isinstance(out.get("session_id"), str) and isinstance(
            payload.get("conversation_id"), str):
        out["session_id"] = payload["conversation_id"]
    roots = payload.get("workspace_roots")
    if "cwd" not in out and isinstance(roots, list) and roots and isinstance(roots[0], str):
        out["cwd"] = roots[0]
    shaping = SHAPES.get(name)
    if shaping is not None:
        shaping(out)
    return out


def parsed(text: object) -> Any:
    """A JSON string's value (an MCP tool's input, a tool's output); the text when it is
    no JSON."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _moved(out: dict[str, Any], tool: str, fields: Mapping[str, str]) -> None:
    """``tool``'s call, its input the payload's ``fields`` (Cursor's name -> initd's),
    taken from the top."""
    out["tool_name"] = tool
    out["tool_input"] = {ours: out.pop(theirs) for theirs, ours in fields.items()
                         if theirs in out}


def _shell(out: dict[str, Any]) -> None:
    _moved(out, SHELL, {"command": "command"})
    if "output" in out:
        out["tool_response"] = {"stdout": out.pop("output"), "stderr": ""}


def _mcp(out: dict[str, Any]) -> None:
    server, tool = out.get("mcp_server_name"), out.get("tool_name")
    if isinstance(server, str) and isinstance(tool, str):
        out["tool_name"] = f"mcp__{server}__{tool}"
    given = parsed(out.get("tool_input"))
    out["tool_input"] = given if isinstance(given, dict) else {"input": given}
    if "result_json" in out:
        out["tool_response"] = parsed(out.pop("result_json"))


def _read(out: dict[str, Any]) -> None:
    _moved(out, READ, {"file_path": "file_path"})


def _edit(out: dict[str, Any]) -> None:
    edits = out.pop("edits", None)
    _moved(out, EDIT, {"file_path": "file_path"})
    if isinstance(edits, list):
        out["tool_input"]["edits"] = edits
        first = edits[0] if len(edits) == 1 and isinstance(edits[0], Mapping) else {}
        out["tool_input"].update({k: first[k] for k in ("old_string", "new_string")
                                  if k in first})
    out["tool_response"] = {"filePath": out["tool_input"].get("file_path"), "success": True}


def _subagent(out: dict[str, Any]) -> None:
    out["tool_name"] = TASK
    task = out.get("task")
    out["tool_input"] = {"subagent_type": out.get("subagent_type"), "description": task,
                         "prompt": task}
    if "tool_call_id" in out:
        out["tool_use_id"] = out["tool_call_id"]


def _tool(out: dict[str, Any]) -> None:
    """preToolUse / postToolUse / postToolUseFailure: the tool in Claude Code's name."""
    tool, given = out.get("tool_name"), out.get("tool_input")
    given = dict(given) if isinstance(given, Mapping) else given
    if tool == "Shell":
        tool = SHELL
    elif tool == "Write" and isinstance(given, dict):
        whole = "old_string" not in given and ("content" in given or "contents" in given)
        tool = WRITE if whole else EDIT
        if whole and "contents" in given and "content" not in given:
            given["content"] = given.pop("contents")
    elif isinstance(tool, str) and tool.startswith("MCP:") and isinstance(
            out.get("mcp_server_name"), str):
        tool = f"mcp__{out['mcp_server_name']}__{tool[4:]}"
    out["tool_name"], out["tool_input"] = tool, given
    if "tool_output" in out:
        out["tool_response"] = parsed(out.pop("tool_output"))
    if "error_message" in out and "error" not in out:
        out["error"] = out["error_message"]
    if isinstance(out.get("duration"), int | float) and "duration_ms" not in out:
        out["duration_ms"] = out["duration"]


def _stop(out: dict[str, Any]) -> None:
    count = out.get("loop_count")
    if "stop_hook_active" not in out and isinstance(count, int):
        out["stop_hook_active"] = count > 0
    if "subagent_type" in out and "agent_type" not in out:
        out["agent_type"] = out["subagent_type"]
    if isinstance(out.get("summary"), str) and "last_assistant_message" not in out:
        out["last_assistant_message"] = out["summary"]


def _started(out: dict[str, Any]) -> None:
    out.setdefault("source", "startup")


SHAPES: dict[str, Shaping] = {
    "beforeShellExecution": _shell, "afterShellExecution": _shell,
    "beforeMCPExecution": _mcp, "afterMCPExecution": _mcp, "beforeReadFile": _read,
    "afterFileEdit": _edit, "subagentStart": _subagent, "preToolUse": _tool,
    "postToolUse": _tool, "postToolUseFailure": _tool, "stop": _stop,
    "subagentStop": _stop, "sessionStart": _started}
