"""A hook's JSON answer (``{"decision": "block"}``, Claude Code's ``permissionDecision``):
read whole, or not at all.

What a result *shows* of a hook's stdout stays bounded (its first and last 32 KiB,
invariant 6), but an answer is parsed from all of it, up to ANSWER_LIMIT kept in memory:
a deny with a long reason (a lint report) once lost its middle, did not parse, and the
tool ran. A stdout that looks like an answer (it starts with ``{``) and cannot be read
(over the limit, not JSON, nested past what the parser takes) is the hook's error, and it
blocks a blockable event (invariant 12): never plain output that lets the action through.
"""

from __future__ import annotations

import json
from typing import Any

from initd.events.actions import ActionResult
from initd.process.output import KEEP

ANSWER_LIMIT = 2**20  # bytes of an event hook's stdout kept for its answer (bounded)
ELIDED = "\n[… output elided …]\n"


class Unreadable(ValueError):
    """The hook's stdout is meant as a JSON answer, and initd cannot read it."""


def kept(head: bytes, tail: bytes, whole: bool) -> dict[str, Any]:
    """An ActionResult's ``stdout`` (at most KEEP bytes of head and of tail), ``answer``
    (all of it, when it may be a JSON answer that stdout does not show whole) and ``cut``
    (not ``whole``: over ANSWER_LIMIT), from what was kept of a stream: its ``head`` and
    ``tail``, which together are all of it when ``whole``."""
    if whole and len(head) + len(tail) <= 2 * KEEP:
        return {"stdout": (head + tail).decode(errors="replace")}
    shown = (head[:KEEP].decode(errors="replace") + ELIDED
             + (head + tail)[-KEEP:].decode(errors="replace"))
    text = (head + tail).decode(errors="replace") if whole else None
    answer = text if text is not None and _looks_like_one(text) else None
    return {"stdout": shown, "answer": answer, "cut": not whole}


def read(result: ActionResult) -> dict[str, Any] | None:
    """The hook's JSON answer; None when its stdout is not one (plain output); Unreadable
    when it looks like one (it starts with ``{``) and cannot be read."""
    text = result.answer if result.answer is not None else result.stdout
    if not _looks_like_one(text):
        return None
    if result.cut:
        raise Unreadable(f"its JSON answer is over {ANSWER_LIMIT // 2**20} MiB: initd "
                         "cannot read it whole (invariant 12: not taken as no answer)")
    try:
        data = json.loads(text)
    except RecursionError:  # [[[[… thousands deep: the parser's limit, not the hook's
        raise Unreadable("its JSON answer is nested too deep for initd to read") from None
    except ValueError as err:
        raise Unreadable(f"its stdout starts like a JSON answer but is not JSON: {err}"
                         ) from None
    if not isinstance(data, dict):  # (cannot be, starting with "{"; a guard all the same)
        raise Unreadable("its JSON answer is not an object")
    return data


def _looks_like_one(text: str) -> bool:
    return text.lstrip().startswith("{")
