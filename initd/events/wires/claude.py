"""Claude Code calling initd (``initd emit --from claude`` as a command hook of every event):
its hook input is initd's shape already, and the answer is a command hook's, as its hooks
reference (https://code.claude.com/docs/en/hooks, "Hook output") reads it:

- exit 0 with a JSON object on stdout: ``continue: false`` + ``stopReason`` stops the
  agent, ``systemMessage`` is for the user, ``decision: "block"`` + ``reason`` blocks the
  events that take one, ``hookSpecificOutput`` (with ``hookEventName``) carries the
  event's own fields: PreToolUse's ``permissionDecision`` (allow | ask | deny),
  ``permissionDecisionReason`` and ``updatedInput``, PermissionRequest's ``decision``
  (``behavior`` allow | deny), PostToolUse's ``updatedToolOutput``, and
  ``additionalContext`` for the model;
- exit 2 with the reason on stderr blocks the events that have no JSON way to (a task
  not created or not completed, a teammate kept working, an elicitation declined);
- WorktreeCreate's answer is a path on stdout's last line, or a non-zero exit (its
  creation fails); StopFailure's is nothing ("Output and exit code are ignored, except
  terminalSequence"); a ConfigChange of ``policy_settings`` cannot be blocked;
- each event's own fields a hook gave that initd does not act on (claude/relayed.py:
  SessionStart's ``sessionTitle``, ``watchPaths``, Elicitation's ``action``...) come
  back as the hook gave them; ``continue: false`` only where the reference reads it.

The reference is the revision of 2026-08-22 (Claude Code v2.1.240). The hooks initd runs
for SessionStart, Setup, CwdChanged and FileChanged append to the CLAUDE_ENV_FILE Claude
Code gave ``initd emit`` (``passes``): they run as the agent, and initd itself never
opens the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from initd.events import wire
from initd.events.claude import relayed
from initd.events.claude.names import ELICITATIONS, EVENTS, NAMES, NO_CONTINUE
from initd.events.wire import Inbound, Reply, Shim

AGENT = "claude"
FIELD = "hook_event_name"
# blocked by "decision": "block" and its "reason" (PostToolUse's and PostToolUseFailure's
# is feedback for the model: the tool already ran)
DECISION = ("user_prompt_submit", "user_prompt_expansion", "post_tool", "post_tool_failure",
            "post_tool_batch", "stop", "subagent_stop", "config_change", "pre_compact")
# additionalContext is read in hookSpecificOutput (the SDK's <Event>HookSpecificOutput)
CONTEXT = ("session_start", "setup", "user_prompt_submit", "user_prompt_expansion",
           "pre_tool", "post_tool", "post_tool_failure", "post_tool_batch", "subagent_start",
           "notification", "stop", "subagent_stop")
# "CLAUDE_ENV_FILE is available for SessionStart, Setup, CwdChanged, and FileChanged hooks"
ENV_FILE = "CLAUDE_ENV_FILE"
ENV_FILE_EVENTS = ("session_start", "setup", "cwd_changed", "file_changed")
NO_PATH = "no WorktreeCreate hook initd ran gave a worktree path"


class ClaudeWire:
    agent = AGENT
    name_field = FIELD
    events: Mapping[str, str] = EVENTS

    def inbound(self, payload: dict[str, Any], name: str | None) -> Inbound:
        said, event = wire.event_of(payload, name, FIELD, EVENTS, "Claude Code")
        return Inbound(event, dict(payload), wire.Origin(AGENT, said, payload))

    def passes(self, event: str) -> tuple[str, ...]:
        """The variables of Claude Code's hook environment that its hooks initd runs for
        ``event`` get too (emit sends them, the service gives them to Claude Code's hooks)."""
        return (ENV_FILE,) if event in ENV_FILE_EVENTS else ()

    def reply(self, inbound: Inbound, outcome: Mapping[str, Any]) -> Reply:
        event = inbound.event
        given = {k: v for said in (outcome.get("hookSpecific") or {}).get(AGENT, [])
                 for k, v in said.items()}  # (the last hook's value of each)
        if event == "stop_failure":  # "Output and exit code are ignored"
            sequence = given.get(relayed.TERMINAL)
            return Reply(0, _json({relayed.TERMINAL: sequence}) if sequence else "", "")
        if event == "worktree_create":
            return _worktree(outcome, given)
        blocked = bool(outcome.get("blocked")) and not _policy(inbound)
        reason = outcome.get("reason") or outcome.get("feedback")
        out = _universal(event, outcome, given, reason)
        specific = _specific(event, outcome, given, blocked, reason)
        if blocked or (event in ("post_tool", "post_tool_failure") and outcome.get("feedback")):
            if event in DECISION:
                out.update({"decision": "block", "reason": reason or "blocked by a hook"})
            elif event in ELICITATIONS and given.get("action") in ("decline", "cancel"):
                pass  # (its "no" is the action in hookSpecificOutput)
            elif event not in ("pre_tool", "permission_request"):
                return Reply(2, "", f"{reason or 'blocked by a hook'}\n")
        if specific:
            out["hookSpecificOutput"] = {"hookEventName": NAMES[event], **specific}
        return Reply(0, _json(out) if out else "", "")

    def shim(self, command: str) -> Shim:
        handler = {"type": "command", "command": command}
        return Shim(".claude/settings.json",
                    {"hooks": {name: [{"hooks": [handler]}] for name in EVENTS}})


def _universal(event: str, outcome: Mapping[str, Any], given: Mapping[str, Any],
               reason: str | None) -> dict[str, Any]:
    """``continue``/``stopReason`` (where the event reads them), ``systemMessage`` and
    ``terminalSequence``."""
    out: dict[str, Any] = {}
    if (outcome.get("continue") is False or outcome.get("aborted")) and \
            event not in NO_CONTINUE:
        out.update({"continue": False, "stopReason": outcome.get("stopReason") or reason
                    or "a hook stopped the agent"})
    if outcome.get("systemMessage"):
        out["systemMessage"] = outcome["systemMessage"]
    if isinstance(given.get(relayed.TERMINAL), str):
        out[relayed.TERMINAL] = given[relayed.TERMINAL]
    return out


def _specific(event: str, outcome: Mapping[str, Any], given: Mapping[str, Any],
              blocked: bool, reason: str | None) -> dict[str, Any]:
    """The answer's ``hookSpecificOutput`` (without its ``hookEventName``)."""
    specific: dict[str, Any] = {name: given[name] for name, check in relayed.FIELDS.get(
        event, {}).items() if name in given and check(given[name]) and name != "worktreePath"}
    permission = "deny" if blocked else outcome.get("permissionDecision")
    if event == "pre_tool" and permission is not None:
        specific.update(permissionDecision=permission)
        if reason:
            specific["permissionDecisionReason"] = reason
        if outcome.get("updatedInput") is not None:
            specific["updatedInput"] = outcome["updatedInput"]
    if event == "permission_request" and permission in ("allow", "deny"):
        specific["decision"] = _decision(permission, outcome, given, reason)
    if outcome.get("updatedOutput") is not None and event == "post_tool":
        specific["updatedToolOutput"] = outcome["updatedOutput"]
    if outcome.get("additionalContext") and event in CONTEXT:
        specific["additionalContext"] = outcome["additionalContext"]
    return specific


def _decision(permission: str, outcome: Mapping[str, Any], given: Mapping[str, Any],
              reason: str | None) -> dict[str, Any]:
    """PermissionRequest's decision object: the behavior that won (deny over allow), its
    message or updatedInput, and what the hook that gave that behavior added to it."""
    decision: dict[str, Any] = {"behavior": permission}
    extra = given.get("decision")
    if isinstance(extra, Mapping) and extra.get("behavior") == permission:
        decision.update({name: extra[name] for name, check in relayed.DECISION[
            permission].items() if name in extra and check(extra[name])})
    if permission == "deny" and reason:
        decision["message"] = reason
    if permission == "allow" and outcome.get("updatedInput") is not None:
        decision["updatedInput"] = outcome["updatedInput"]
    return decision


def _worktree(outcome: Mapping[str, Any], given: Mapping[str, Any]) -> Reply:
    """WorktreeCreate: the path on stdout ("the last non-empty line"), or a failure:
    "Any non-zero exit code causes worktree creation to fail"."""
    path = given.get("worktreePath")
    if outcome.get("blocked") or not isinstance(path, str) or not path.strip() \
            or "\n" in path or "\r" in path:
        why = outcome.get("reason") if outcome.get("blocked") else None
        return Reply(1, "", f"{why or NO_PATH}\n")
    return Reply(0, f"{path}\n", "")


def _policy(inbound: Inbound) -> bool:
    """A ConfigChange of the managed settings: "policy_settings changes can't be blocked
    ... any blocking decision is ignored"."""
    return inbound.event == "config_change" and \
        inbound.payload.get("source") == "policy_settings"


def _json(out: Mapping[str, Any]) -> str:
    return json.dumps(out) + "\n"


WIRE = ClaudeWire()
