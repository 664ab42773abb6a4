"""Gemini CLI calling initd (``initd emit --from gemini`` as a command hook of each of its
events, in ``~/.gemini/settings.json``), and its events in initd's shape and back, as its
hooks reference has them (https://geminicli.com/docs/hooks/reference, @google/gemini-cli
0.61.0):

- in: Gemini's tools by initd's (Claude Code's) names, ``run_shell_command`` Bash,
  ``write_file`` Write, ``replace`` Edit, ``read_file`` Read (Gemini's own
  ``gemini hooks migrate``'s table), an MCP tool ``mcp_SERVER_TOOL`` as
  ``mcp__SERVER__TOOL`` when ``mcp_context`` names both, the event's name as Claude Code
  names it, and every other field as it came;
- the answer: exit 0 with only a JSON object on stdout, ``decision: "deny"`` and its
  ``reason`` where Gemini blocks (a tool, a turn, a model call, a response), ``continue:
  false`` and ``stopReason``, ``systemMessage``, ``hookSpecificOutput`` with the event's
  own fields (a tool's rewritten ``tool_input``, ``additionalContext``, and what Gemini's
  hooks said in Gemini's words: ``llm_request``, ``llm_response``, ``toolConfig``,
  ``clearContext``, ``tailToolCallRequest``, merged as Gemini merges them);
- out (``outbound``): an event another agent sent, as a Gemini hook reads it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from initd.events import wire
from initd.events.claude.names import NAMES as CLAUDE
from initd.events.wire import Inbound, Reply, Shim
from initd.state.clock import now_iso

AGENT = "gemini"
FIELD = "hook_event_name"
EVENTS = {
    "SessionStart": "session_start", "SessionEnd": "session_end",
    "BeforeAgent": "user_prompt_submit", "AfterAgent": "stop",
    "BeforeModel": "before_model", "AfterModel": "after_model",
    "BeforeToolSelection": "before_tool_selection", "BeforeTool": "pre_tool",
    "AfterTool": "post_tool", "PreCompress": "pre_compact", "Notification": "notification"}
NAMES = {event: name for name, event in EVENTS.items()}
TOOLS = {"run_shell_command": wire.SHELL, "write_file": wire.WRITE, "replace": wire.EDIT,
         "read_file": wire.READ}
# where Gemini honours a block (decision deny, exit 2); the rest are advisory ("continue
# and decision fields are ignored"), and Notification and PreCompress read only these
BLOCKS = ("BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "BeforeModel",
          "AfterModel")
ADVISORY = ("SessionStart", "SessionEnd", "Notification", "PreCompress",
            "BeforeToolSelection")
PLAIN = ("suppressOutput", "systemMessage")  # NotificationOutput, PreCompressOutput
# each event's hookSpecificOutput (types.d.ts <Event>Output), but hookEventName
SPECIFIC = {"BeforeTool": ("tool_input",),
            "AfterTool": ("additionalContext", "tailToolCallRequest"),
            "BeforeAgent": ("additionalContext",), "AfterAgent": ("clearContext",),
            "SessionStart": ("additionalContext",),
            "BeforeModel": ("llm_request", "llm_response"), "AfterModel": ("llm_response",),
            "BeforeToolSelection": ("toolConfig",)}


def ours(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A tool call's name in initd's words (``tool_name``, every field kept)."""
    out = wire.tool(payload, TOOLS)
    said, mcp = payload.get("tool_name"), payload.get("mcp_context")
    if isinstance(said, str) and isinstance(mcp, Mapping):
        server, name = mcp.get("server_name"), mcp.get("tool_name")
        if isinstance(server, str) and isinstance(name, str) and \
                said == f"mcp_{server}_{name}":
            out["tool_name"] = f"{wire.MCP_PREFIX}{server}__{name}"
    return out


def theirs(tool: str) -> str:
    """initd's name of a tool in Gemini's words (``Bash`` is ``run_shell_command``)."""
    back = {ours: theirs for theirs, ours in TOOLS.items()}
    if tool in back:
        return back[tool]
    if tool.startswith(wire.MCP_PREFIX) and "__" in tool[len(wire.MCP_PREFIX):]:
        server, name = tool[len(wire.MCP_PREFIX):].split("__", 1)
        return f"mcp_{server}_{name}"
    return tool


def outbound(payload: Mapping[str, Any], name: str, workspace: str,
             session: str) -> dict[str, Any]:
    """An event in initd's shape (another agent's) as a Gemini hook reads it: its base
    fields (the reference's "Base input schema") where the event has none, the tool in
    Gemini's words, AfterAgent's ``prompt_response`` (Claude Code's
    ``last_assistant_message``), every other field as it is."""
    out: dict[str, Any] = {"session_id": session, "transcript_path": "", "cwd": workspace,
                           "timestamp": now_iso(), **payload, FIELD: name}
    if isinstance(out.get("tool_name"), str):
        out["tool_name"] = theirs(out["tool_name"])
    if name == "AfterAgent":
        said = payload.get("last_assistant_message")
        out.setdefault("prompt_response", said if isinstance(said, str) else "")
        out.setdefault("prompt", "")
    if name == "Notification":
        out.setdefault("details", {})
    return out


def merged(event: str, said: list[dict[str, Any]]) -> dict[str, Any]:
    """Gemini's hooks' own hookSpecificOutput fields, merged as its engine merges them
    (hookAggregator.js): BeforeToolSelection's tools a union, its mode NONE over ANY
    over AUTO; AfterAgent's clearContext true if one says it; else the later wins."""
    out: dict[str, Any] = {}
    for fields in said:
        out.update({k: v for k, v in fields.items() if k != "clearContext"})
        if fields.get("clearContext") is True:
            out["clearContext"] = True
    configs = [f["toolConfig"] for f in said if isinstance(f.get("toolConfig"), Mapping)]
    if event == "BeforeToolSelection" and configs:
        modes = {c.get("mode") for c in configs}
        mode = next((m for m in ("NONE", "ANY") if m in modes), "AUTO")
        names = sorted({n for c in configs for n in c.get("allowedFunctionNames") or []
                        if isinstance(n, str)})
        out["toolConfig"] = {"mode": mode, "allowedFunctionNames": [] if mode == "NONE"
                             else names}
    return {k: v for k, v in out.items() if k in SPECIFIC.get(event, ())}


class GeminiWire:
    agent = AGENT
    name_field = FIELD
    events: Mapping[str, str] = EVENTS

    def inbound(self, payload: dict[str, Any], name: str | None) -> Inbound:
        said, event = wire.event_of(payload, name, FIELD, EVENTS, "Gemini CLI")
        out = ours(payload)
        out[FIELD] = CLAUDE.get(event, said)
        if said == "AfterAgent" and isinstance(payload.get("prompt_response"), str):
            out.setdefault("last_assistant_message", payload["prompt_response"])
        return Inbound(event, out, wire.Origin(AGENT, said, payload))

    def reply(self, inbound: Inbound, outcome: Mapping[str, Any]) -> Reply:
        name = inbound.origin.name
        reason = outcome.get("reason") or outcome.get("feedback")
        out: dict[str, Any] = {}
        if name not in ADVISORY and (outcome.get("continue") is False
                                     or outcome.get("aborted")):
            out.update({"continue": False, "stopReason": outcome.get("stopReason") or reason
                        or "a hook stopped the agent"})
        if outcome.get("systemMessage") and name != "BeforeToolSelection":
            out["systemMessage"] = outcome["systemMessage"]
        replaced = outcome.get("updatedOutput")
        if name == "AfterTool" and replaced is not None:  # what the model sees instead
            out.update({"decision": "deny", "reason": replaced if isinstance(replaced, str)
                        else json.dumps(replaced)})
        elif outcome.get("blocked") and name in BLOCKS:
            out.update({"decision": "deny", "reason": reason or "blocked by a hook"})
        elif outcome.get("blocked"):  # (Gemini cannot block it: the user is told)
            out["systemMessage"] = "\n".join(filter(None, (out.get("systemMessage"), reason)))
        elif outcome.get("permissionDecision") == "ask" and name == "BeforeTool":
            out["decision"] = "ask"
        specific = self._specific(inbound, outcome, name)
        if specific:
            out["hookSpecificOutput"] = {"hookEventName": name, **specific}
        if name in ("Notification", "PreCompress"):
            out = {k: v for k, v in out.items() if k in PLAIN}
        return Reply(0, json.dumps(out) + "\n" if out else "", "")

    @staticmethod
    def _specific(inbound: Inbound, outcome: Mapping[str, Any], name: str
                  ) -> dict[str, Any]:
        own = (outcome.get("hookSpecific") or {}).get(AGENT) or []
        specific = merged(name, [f for f in own if isinstance(f, dict)])
        context = outcome.get("additionalContext")
        if name == "AfterTool" and outcome.get("feedback") and not outcome.get("blocked"):
            context = "\n".join(filter(None, (context, outcome["feedback"])))
        if context and "additionalContext" in SPECIFIC.get(name, ()):
            specific["additionalContext"] = context
        updated, given = outcome.get("updatedInput"), inbound.origin.payload.get("tool_input")
        if name == "BeforeTool" and isinstance(updated, dict):  # merged over the model's
            specific["tool_input"] = {**(given if isinstance(given, dict) else {}),
                                      **updated}
        return specific

    def unasked(self, inbound: Inbound, why: str) -> Reply:
        """initd could not put the event to its hooks: Gemini's own block where it blocks
        (a retried AfterAgent would loop: it stops the agent instead, with the reason),
        a warning elsewhere."""
        name = inbound.origin.name
        if name == "AfterAgent":
            return Reply(0, json.dumps({"continue": False, "stopReason": why}) + "\n", "")
        if name in BLOCKS:
            return self.reply(inbound, wire.blocked_outcome(why))
        return Reply(1, "", f"{why}\n")

    def shim(self, command: str) -> Shim:
        """Every event, every tool and source (no matcher), with an hour to answer: a hook
        Gemini times out is a warning, and the action goes on."""
        handler = {"type": "command", "command": command, "name": "initd",
                   "timeout": 3_600_000}
        return Shim(".gemini/settings.json",
                    {"hooks": {name: [{"hooks": [handler]}] for name in EVENTS}})


WIRE = GeminiWire()
