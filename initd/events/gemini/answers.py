"""What a Gemini CLI hook's answer means, as its hooks reference gives it
(https://geminicli.com/docs/hooks/reference, "Global hook mechanics", "Common output
fields" and each event's "Relevant Output Fields"; @google/gemini-cli 0.61.0), read where
it is silent as its engine reads it (@google/gemini-cli-core 0.61.0, hookRunner.js):

- the answer is stdout, or stderr when stdout is empty: a JSON object decides;
  ``{"decision": "deny"}`` (or ``"block"``) with its ``reason`` blocks the tool (BeforeTool),
  the turn (BeforeAgent), the model's call or response (BeforeModel, AfterModel) and asks
  for a retry (AfterAgent); on AfterTool it replaces the tool's result with the reason;
  ``"ask"`` asks the user (BeforeTool); ``continue: false`` and ``stopReason`` stop the
  agent; ``systemMessage`` is for the user; ``hookSpecificOutput`` holds
  ``additionalContext``, BeforeTool's ``tool_input`` (merged over the model's) and the
  event's own fields (``llm_request``, ``llm_response``, ``toolConfig``, ``clearContext``,
  ``tailToolCallRequest``), which go to the agent as they were said;
- exit 2 blocks, with stderr as its reason ("System Block"), whatever else it printed;
- plain text: on exit 0 a message for the user ("default to Allow and treat the entire
  output as a systemMessage"), on exit 1 a warning, on any other exit a block (the
  engine's reading, where the reference says "Warning": the one that blocks);
- SessionStart, SessionEnd, Notification, PreCompress and BeforeToolSelection are
  advisory: their ``continue`` and ``decision`` are not read.

initd's own deviation (invariant 12): a stdout that starts like a JSON answer and is none
(or is over 1 MiB) is the hook's error, which blocks, where Gemini would take it as text.
"""

from __future__ import annotations

import json
from typing import Any

from initd.events import answers
from initd.events.actions import ActionResult, Status
from initd.events.model import EventHook
from initd.events.verdict import Decision, Verdict
from initd.events.wires.gemini import ADVISORY, NAMES
from initd.hooks.kinds import Event

# initd's events whose block Gemini's hooks can make (the tool, the turn, the model's
# call or its response, a retry); AfterTool's "deny" replaces the result instead
BLOCKING = ("pre_tool", "user_prompt_submit", "stop", "before_model", "after_model")
REPLACES = "post_tool"
OWN = ("hookEventName", "additionalContext", "tool_input")  # read here, not passed on


def verdict(result: ActionResult, hook: EventHook, event: Event) -> Verdict:
    if result.status in (Status.ERROR, Status.UNTRUSTED):
        blocks = event.blockable and (hook.on_error == "deny" or result.fails_closed)
        return Verdict(blocks, False, None, f"{hook.label}: {result.error}", None,
                       result.error, permission="deny" if blocks and event.name ==
                       "pre_tool" else None)
    said = _said(result)
    code = result.exit_code or 0
    if code == 2 or (isinstance(said, str) and code != 1 and code != 0):
        data = said if isinstance(said, dict) else {}
        reason = _text(data.get("reason")) if data.get("decision") in ("deny", "block") \
            else None
        why = reason or result.stderr.strip() or (said if isinstance(said, str) else None) \
            or f"{hook.label} exited {code} and said nothing"
        return _blocking(event, why, _structured(data, event, result.error))
    if isinstance(said, dict):
        return _structured(said, event, result.error)
    note = result.error or (f"exit {code}" if code else None)
    if isinstance(said, str) and said:
        return Verdict(False, False, None, None, None, note,
                       system_message=said if code == 0 else f"Warning: {said}")
    return Verdict(False, False, None, None, None, note)


def _said(result: ActionResult) -> dict[str, Any] | str | None:
    """The answer: stdout's JSON object (answers.Unreadable when it starts like one and is
    none: the hook's error), or stderr's when stdout is empty, else the text."""
    data = answers.read(result)
    if data is not None:
        return data
    text = result.stdout.strip() or result.stderr.strip()
    if not text:
        return None
    if not result.stdout.strip() and text.startswith("{"):
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            return text
        return parsed if isinstance(parsed, dict) else text
    return text


def _structured(data: dict[str, Any], event: Event, note: str | None) -> Verdict:
    name = NAMES.get(event.name, "")
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    decision = data.get("decision")
    keep = data.get("continue") if isinstance(data.get("continue"), bool) else None
    if name in ADVISORY and (keep is False or decision is not None):
        note = note or f"{name} is advisory: its continue and decision are not read"
        keep, decision = None, None
    updated = specific.get("tool_input")
    own = {k: v for k, v in specific.items() if k not in OWN}
    said = Verdict(
        False, False, Decision.APPROVE if decision in ("allow", "approve") else None, None,
        None, note, permission="ask" if decision == "ask" and event.name == "pre_tool"
        else None, context=_text(specific.get("additionalContext")),
        system_message=None if name == "BeforeToolSelection" else _text(
            data.get("systemMessage")),
        continue_=keep, stop_reason=(_text(data.get("stopReason")) or _text(
            data.get("reason"))) if keep is False else None,
        updated_input=updated if isinstance(updated, dict) and event.name == "pre_tool"
        else None, suppress=data.get("suppressOutput") is True, specific=own or None)
    if decision in ("deny", "block"):
        return _blocking(event, _text(data.get("reason")) or "No reason provided", said)
    return said


def _blocking(event: Event, why: str, said: Verdict) -> Verdict:
    """``said``, blocking where Gemini's hooks block (on AfterTool: the tool's result
    replaced by ``why``)."""
    if event.name == REPLACES:
        return said._replace(updated_output=why, decision=Decision.BLOCK)
    if event.name in BLOCKING and event.blockable:
        return said._replace(blocks=True, decision=Decision.BLOCK, reason=why,
                             permission="deny" if event.name == "pre_tool" else None)
    return said._replace(note=said.note or f"a block, but {event.name} cannot be blocked "
                         "by a Gemini CLI hook")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
