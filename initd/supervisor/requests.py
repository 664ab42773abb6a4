"""What the hook service may ask of root over its channel, checked before anything is
done: its op, its fields and their types. The service runs as the agent, which may
ptrace it: its end of the channel is the agent's. Root runs no hook for it (invariant
11): the one request that makes root act is ``precommit``, initd's own install, run as
the repository's owner and never as uid 0. ``trust`` only asks whether a hook's hash is
approved: the trust store is root's alone (0600), and the service must not refuse what a
person approved. ``control`` starts, stops or restarts one of the image's services, only
one that runs as the agent's own uid (services.py), and never waits. How often each may
be asked: serviceops.py (invariant 16)."""

from __future__ import annotations

from collections.abc import Container

from initd.errors import shown
from initd.hooks.truststore import well_formed
from initd.process.channel import Message

# every op, and the fields it may carry besides "op"
FIELDS = {"ready": {"pid"}, "cancel": {"id"}, "precommit": {"id"},
          "trust": {"id", "key", "digest"}, "control": {"id", "service", "verb"},
          "metrics": {"counts"}}
# ``metrics``: what the service counted, for /metrics; its ``counts`` are data, read by
# state/hookcounts.parse (what it cannot read is left out)
VERBS = ("start", "stop", "restart")  # what ``control`` may ask of a service


def problem(message: Message, running: Container[object]) -> str | None:
    """Why ``message`` is not one of ours, in a few words (never its data)."""
    op = message.get("op")
    allowed = FIELDS.get(op) if isinstance(op, str) else None
    if allowed is None:
        return f"an unknown op {shown(op, 24)}"
    if not set(message) - {"op"} <= allowed:
        return f"a {op} message with fields it does not have"
    if op == "metrics":
        return None
    if op == "ready":
        pid = message.get("pid")
        return None if pid is None or _whole(pid) else "a ready message with a bad pid"
    request_id = message.get("id")
    if not _whole(request_id):
        return f"a {op} message without a request id"
    if op != "cancel" and request_id in running:
        return f"a {op} request reusing the id of one still running"
    if op == "trust" and not well_formed(message.get("key"), message.get("digest")):
        return "a trust request without a key and a sha256"
    if op == "control" and not (message.get("verb") in VERBS and isinstance(
            name := message.get("service"), str) and 0 < len(name) <= 63):
        return "a control request without a service name and a verb"
    return None


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**53
