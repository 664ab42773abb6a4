"""A Codex payload in initd's shape (Claude Code's), and an event of initd's in Codex's.

Inward, the fields are Claude Code's already (``session_id``, ``cwd``, ``tool_name``,
``tool_input``…) but for ``apply_patch``: its patch becomes Claude Code's ``Write`` of the
file it adds (``file_path``, ``content``) or ``Edit`` of the file it changes
(``file_path``, ``old_string``, ``new_string``), the path made absolute from the session's
cwd, so that a guard on ``Write|Edit`` (or ``Edit(.env)``) sees the file: one payload per
file a patch writes, each put to another format's hooks (events/wire.Origin's ``each``).

Outward, a Codex hook of an event another agent sent (or ``initd emit``) reads it as
Codex writes it: the fields of the event's input schema (``additionalProperties:
false``) and no other, each required one there (the agent's value when it sent one of
the right kind, else a neutral one: ``""``, ``null``, ``false``, ``"default"``), and
Claude Code's file tools as an ``apply_patch``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from initd.events.codex import patch
from initd.events.codex.names import FILE_TOOLS, PATCH

TEXT, NULLABLE, FLAG, ANY = "text", "nullable", "flag", "any"
MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
BASE = (("session_id", TEXT), ("transcript_path", NULLABLE), ("cwd", TEXT),
        ("hook_event_name", TEXT))
TURN = (("model", TEXT), ("permission_mode", MODES), ("turn_id", TEXT))
SUBAGENT = (("agent_id", TEXT), ("agent_type", TEXT))
TOOL = (("tool_name", TEXT), ("tool_input", ANY))
STOP = (("stop_hook_active", FLAG), ("last_assistant_message", NULLABLE))
COMPACT = (("model", TEXT), ("turn_id", TEXT), ("trigger", ("manual", "auto")))
# each event's fields, as @openai/codex@0.171.0's input schemas give them
FIELDS: dict[str, tuple[tuple[str, Any], ...]] = {
    "session_start": (*BASE, ("model", TEXT), ("permission_mode", MODES),
                      ("source", ("startup", "resume", "clear", "compact", "fork"))),
    "session_end": (*BASE, ("reason", ("other",))),
    "user_prompt_submit": (*BASE, *TURN, ("prompt", TEXT)),
    "pre_tool": (*BASE, *TURN, *TOOL, ("tool_use_id", TEXT)),
    "permission_request": (*BASE, *TURN, *TOOL),
    "post_tool": (*BASE, *TURN, *TOOL, ("tool_response", ANY), ("tool_use_id", TEXT)),
    "pre_compact": (*BASE, *COMPACT), "post_compact": (*BASE, *COMPACT),
    "subagent_start": (*BASE, *TURN, *SUBAGENT),
    "subagent_stop": (*BASE, *TURN, *SUBAGENT, ("agent_transcript_path", NULLABLE), *STOP),
    "stop": (*BASE, *TURN, *STOP), "interrupt": (*BASE, *TURN)}
# given when the agent sent them, never made up: a subagent's, on its own events
OPTIONAL = {event: SUBAGENT for event in ("user_prompt_submit", "pre_tool", "post_tool",
                                           "permission_request", "pre_compact",
                                           "post_compact")}


def inward(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """``payload`` (Codex's) in initd's shape: every field kept, an ``apply_patch``'s
    input read as the files it writes, one payload each (a patch of none initd can read
    is one Edit of no file, which a rule on Edit still sees)."""
    given = payload.get("tool_input")
    if payload.get("tool_name") != PATCH or not isinstance(given, Mapping):
        return [dict(payload)]
    command = given.get("command", given.get("patch"))
    ops = patch.parse(command) if isinstance(command, str) else []
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else ""
    if not ops:
        return [{**payload, "tool_name": "Edit", "tool_input": dict(given)}]
    return [_file(payload, op, str(cwd)) for op in ops]


def _file(payload: dict[str, Any], op: patch.FileOp, cwd: str) -> dict[str, Any]:
    """One file of a patch: a Write of the file it adds, an Edit of one it changes."""
    path = os.path.normpath(os.path.join(cwd, op.written))
    if op.kind == "add":
        return {**payload, "tool_name": "Write",
                "tool_input": {"file_path": path, "content": patch.text(op.new)}}
    return {**payload, "tool_name": "Edit", "tool_input": {
        "file_path": path, "old_string": patch.text(op.old), "new_string": patch.text(op.new)}}


def outward(payload: Mapping[str, Any], event: str, name: str, session: str,
            workspace: str) -> dict[str, Any]:
    """initd's ``payload`` of ``event`` as Codex would write it (``name``: Codex's name of
    the event); ``session`` and ``workspace`` when the payload has no session or cwd."""
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else workspace
    given = {**payload, "hook_event_name": name, "cwd": cwd}
    given.setdefault("session_id", session)
    if event in ("pre_tool", "post_tool", "permission_request"):
        given.update(_tool(payload, event, str(cwd)))
    out = {key: _value(given.get(key), kind) for key, kind in FIELDS[event]}
    for key, _ in OPTIONAL.get(event, ()):
        if isinstance(given.get(key), str):
            out[key] = given[key]
    return out


def _value(value: Any, kind: Any) -> Any:
    if kind == ANY:
        return value
    if kind == NULLABLE:
        return value if isinstance(value, str) else None
    if kind == FLAG:
        return value if isinstance(value, bool) else False
    if isinstance(kind, tuple):
        return value if value in kind else kind[0]
    return value if isinstance(value, str) else ""


def _tool(payload: Mapping[str, Any], event: str, cwd: str) -> dict[str, Any]:
    """Claude Code's tool as Codex's: a file tool is an ``apply_patch``, its shell
    ``Bash`` with ``command`` (and, asking for permission, ``description``)."""
    name, given = payload.get("tool_name"), payload.get("tool_input")
    given = given if isinstance(given, Mapping) else {}
    if name in FILE_TOOLS:
        made = patch.build(str(name), given, cwd)
        if made is not None:
            return {"tool_name": PATCH, "tool_input": {"command": made}}
    if name == "Bash":
        keep = ("command", "description") if event == "permission_request" else ("command",)
        return {"tool_input": {k: given[k] for k in keep if isinstance(given.get(k), str)}}
    return {}
