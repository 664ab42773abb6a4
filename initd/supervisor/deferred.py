"""The hook service, started when it is first needed (ARCHITECTURE.md, boot step 5).

The control socket is bound before the agent starts, and a request made before the
service serves waits in its backlog (as during a restart). So the service need not start
with the agent: root starts it at the first connection on the socket (the listening
socket polled readable: root never accepts it, nor reads a byte of it; the service it
starts accepts the connection, which waited), or once the agent has run for SETTLE
seconds, whichever comes first. A CMD that exits sooner and never connects costs no
hook service: none is started, and none stopped (nor while what its leader left is
being stopped, or while it waits to be restarted: the delay counts only while it runs).
During the agent's stop a connection still starts it (the agent may fire events as it
shuts down); the delay does not.

What the service does at its start without being asked happens at that start: it
recovers what a dead runner left "running", says it is ready, and from then on is the
supervised child hookservice.py makes (restarts, backoff, its channel). The guards are
not taken then: the snapshot (supervisor/guards.py) was sealed before the agent's first
instruction, and every start of the service gets that one (invariant 15).
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from initd.process import spawn

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol

    from initd.config.log import Logger
    from initd.state.hookcounts import Counts, Tally
    from initd.supervisor.sigchan import SignalChannel

    class Listener(Protocol):  # the control socket, as http/bind.py made it
        def fileno(self) -> int: ...
        def getsockname(self) -> Any: ...
        def close(self) -> None: ...

    class Service(Protocol):  # hookservice.ServiceChild (which imports this module)
        counts: Tally
        def waitables(self) -> list[Any]: ...
        def timeout(self) -> float | None: ...
        def tick(self) -> None: ...
        def push(self, state: dict[str, Any]) -> None: ...
        def describe(self) -> dict[str, Any]: ...
        def stop(self, sig: int, signals: SignalChannel | None = None,
                 grace: float | None = None) -> int: ...
        def close(self) -> None: ...

SETTLE = 0.5  # seconds the agent runs before its hook service starts unasked: past a
# small agent API's start, busy node or not (bench/README.md), so that the service's start
# does not compete with it; before an agent's harness has loaded and sends its first
# event, so that the event seldom waits for the service's start; and soon enough for what
# the service does unasked (what a dead runner left "running", recovered)


class DeferredService:
    """The hook service before and after its start, as the supervisor's loop and its
    stop see a child: waitables, timeout, tick, push, describe, stop, close."""

    def __init__(self, listener: Listener, start: Callable[[], Service],
                 running: Callable[[], bool], log: Logger, settle: float | None = None
                 ) -> None:
        self.listener = listener  # (bound before the agent started)
        self._start = start
        self.running = running  # is the agent's process there?
        self.log = log
        self.settle = SETTLE if settle is None else settle
        self.due = time.monotonic() + self.settle  # (made as the agent starts)
        self.service: Service | None = None

    def waitables(self) -> list[Any]:
        return self.service.waitables() if self.service is not None else [self.listener]

    def timeout(self) -> float | None:
        if self.service is not None:
            return self.service.timeout()
        return max(0.0, self.due - time.monotonic()) if self.running() else None

    def tick(self) -> None:
        if self.service is not None:
            self.service.tick()
        elif self.asked():
            self.begin("a client connected")
        elif time.monotonic() >= self.due and self.running():
            self.begin(f"the agent has run for {self.settle:g} s")

    def asked(self) -> bool:
        """A connection waits on the control socket (polled, never accepted here)."""
        return bool(spawn.wait_fds([self.listener], 0))

    def begin(self, why: str) -> None:
        self.log.debug("hook service needed", why=why)
        self.service = self._start()

    # --- during the agent's stop (Supervised.stop's ``beside``)

    def watched(self) -> list[Any]:
        """While it has not started: the control socket (a connection starts it)."""
        return [self.listener] if self.service is None else []

    def notice(self) -> None:
        if self.service is None and self.asked():
            self.begin("a client connected while the agent stopped")

    # --- as the supervisor tells and ends it

    def push(self, state: dict[str, Any]) -> None:
        if self.service is not None:
            self.service.push(state)

    def describe(self) -> dict[str, Any]:
        """Before its start: not started, and why it is not yet ("readyBy")."""
        if self.service is not None:
            return self.service.describe()
        return {"state": "stopped", "ready": False, "pid": None, "restarts": 0,
                "lastExitCode": None, "startedAt": None, "readyAt": None,
                "readyBy": f"its control API (started at its first request, or once the "
                           f"agent has run {self.settle:g} s)"}

    def hook_counts(self) -> Counts | None:
        """What the service said it counted, over all its starts (/metrics); None before
        its first."""
        return self.service.counts.totals if self.service is not None else None

    def stop(self, sig: int, signals: SignalChannel | None = None,
             grace: float | None = None) -> int:
        """Never started: nothing to stop."""
        if self.service is None:
            return 0
        return self.service.stop(sig, signals, grace)

    def close(self) -> None:
        if self.service is not None:
            self.service.close()
        else:  # (nobody was served: whoever waits in the backlog is refused)
            close_listener(self.listener)


def close_listener(listener: Listener) -> None:
    """The control socket closed and its file gone: at the service's end, or when no
    service was started on it."""
    path = listener.getsockname()
    listener.close()
    try:
        os.unlink(path)  # a link put there is removed, never followed
    except OSError:
        pass
