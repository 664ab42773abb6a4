"""What the hook service may ask of root over its channel, checked before anything is
done: its op, its fields and their types, a hook id that is a hook id. The service runs
as the agent, which may ptrace it: its end of the channel is the agent's."""

from __future__ import annotations

from collections.abc import Container

from initd.channel import Message
from initd.errors import shown
from initd.hooks import model

FIELDS = {"ready": {"pid"}, "cancel": {"id"}, "root-hook": {"id", "hook"},
          "precommit": {"id"}}  # every op, and the fields it may carry besides "op"


def problem(message: Message, running: Container[object]) -> str | None:
    """Why ``message`` is not one of ours, in a few words (never its data)."""
    op = message.get("op")
    allowed = FIELDS.get(op) if isinstance(op, str) else None
    if allowed is None:
        return f"an unknown op {shown(op, 24)}"
    if not set(message) - {"op"} <= allowed:
        return f"a {op} message with fields it does not have"
    if op == "ready":
        pid = message.get("pid")
        return None if pid is None or _whole(pid) else "a ready message with a bad pid"
    request_id = message.get("id")
    if not _whole(request_id):
        return f"a {op} message without a request id"
    if op != "cancel" and request_id in running:
        return f"a {op} request reusing the id of one still running"
    if op == "root-hook" and not (isinstance(message.get("hook"), str)
                                  and model.ID.fullmatch(message["hook"])):
        return "a root-hook request whose hook is not a hook id"
    return None


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**53
