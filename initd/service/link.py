"""The hook service's end of the private channel to the root supervisor (channel.py).

The supervisor tells the service what only it knows (the agent's lifecycle and
readiness, for ``/v1/health`` and ``/v1/ready``), answers its trust questions, and
rewrites the pre-commit chain for it (as the repository's owner, never as uid 0), each at
a bounded rate (supervisor/serviceops.py): a question past it waits its turn, a rewrite
past it is refused, and asked again at the next turn. It runs no hook for the service:
once the agent runs, every hook runs as the agent (invariant 11). A reader thread keeps
the latest state and hands replies to the threads waiting for them.
"""

from __future__ import annotations

import itertools
import os
import threading
from typing import Any

from initd.config.log import Logger
from initd.errors import InitdError
from initd.process.channel import Channel, Message, ProtocolError

POLL = 0.1  # how often a waiting request looks at its cancel event


class LinkDown(Exception):
    """The supervisor is gone (initd is stopping) or broke the protocol."""


class SupervisorLink:
    def __init__(self, channel: Channel, log: Logger) -> None:
        self.channel = channel
        self.log = log
        self.state: Message = {}  # the supervisor's last word on initd, agent, service
        self.down = False
        self._replies: dict[int, Message] = {}
        self._changed = threading.Condition()
        self._ids = itertools.count(1)
        threading.Thread(target=self._read, name="supervisor-link", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                messages = self.channel.receive()
            except ProtocolError as err:  # the supervisor is ours: this is a bug
                self.log.error("the supervisor's channel broke", error=str(err))
                messages = None
            with self._changed:
                if messages is None:
                    self.down = True
                    self._changed.notify_all()
                    return
                for message in messages:
                    if message.get("op") == "state":
                        self.state = message
                    elif message.get("op") == "reply" and isinstance(message.get("id"), int):
                        self._replies[message["id"]] = message
                self._changed.notify_all()

    def ready(self) -> None:
        """Tell the supervisor the API is served: it may start the agent."""
        self.channel.send({"op": "ready", "pid": os.getpid()})

    def request(self, op: str, cancel: threading.Event | None = None,
                **fields: Any) -> Message:
        """Ask, and wait for the reply; a set ``cancel`` is passed on (once)."""
        request_id = next(self._ids)
        if not self.channel.send({"op": op, "id": request_id, **fields}):
            raise LinkDown("initd's supervisor cannot be reached")
        cancelled = False
        with self._changed:
            while request_id not in self._replies:
                if self.down:
                    raise LinkDown("initd's supervisor went away before it answered")
                if cancel is not None and cancel.is_set() and not cancelled:
                    cancelled = self.channel.send({"op": "cancel", "id": request_id})
                self._changed.wait(POLL)
            return self._replies.pop(request_id)

    def trust_verdict(self, key: str, digest: str) -> str | None:
        """Root's word on one hook's hash (the trust store is root's, 0600): None when
        approved, else why not. No answer is a refusal, never an approval."""
        try:
            reply = self.request("trust", key=key, digest=digest)
        except LinkDown as err:
            return f"not trusted: not checked ({err})"
        if reply.get("trusted") is True:
            return None
        return str(reply.get("why") or reply.get("error") or "not trusted: no answer")

    def refresh_precommit(self) -> tuple[bool, str]:
        """Root rewrites the managed pre-commit chain from the hooks as they are now, as
        the repository's owner: (True, what it did), or (False, why it never will for
        these hooks: the repository is root's). What may go another time (a hooks
        directory too big to take over, root busy, too many asks) raises InitdError."""
        reply = self.request("precommit")
        if "error" in reply:
            raise InitdError(str(reply["error"]))
        if "refused" in reply:
            return False, str(reply["refused"])
        return True, str(reply.get("result"))
