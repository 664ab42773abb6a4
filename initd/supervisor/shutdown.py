"""The end of a boot: what initd started besides the agent, stopped within one budget.

The stop signal gives the agent ``--grace`` (its own stop: loop.stop). Meanwhile the
background session hooks and devcontainer.json's commands and daemons are stopped too,
each in a thread (stop signal, grace, KILL to their groups and sessions); the hook
service is stopped once the agent is gone, since the agent may still fire events while
it shuts down, with what is left of the same grace (at least FLOOR): its group and its
whole session together, by one deadline (hookservice.py), never one grace after the
other. So a stop takes ``--grace``, plus FLOOR and at most a second or two for killed
groups to be gone (proc.KILL_SETTLE, each), plus PID 1's sweep, whatever the agent
does: ignore TERM, stop its own service, leave a process in its service's session or
group that ignores TERM, or hold a lock on a state file root writes
(statefile.STOPPING: root's writers then wait for no lock held by someone else).

When the agent ends by itself, everything else is stopped at once the same way.
"""

from __future__ import annotations

import signal
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from initd.devcontainer.lifecycle import Lifecycle
    from initd.hooks.phase import BackgroundHooks
    from initd.supervisor.deferred import DeferredService
    from initd.supervisor.services import ServiceSet

FLOOR = 0.5  # seconds the hook service gets at least, when the agent took all the grace


class Shutdown:
    def __init__(self, grace: float) -> None:
        self.grace = grace
        self.background: BackgroundHooks | None = None
        self.lifecycle: Lifecycle | None = None
        self.service: DeferredService | None = None
        self.services: ServiceSet | None = None  # the image's (services.py)
        self.deadline: float | None = None
        self._threads: list[threading.Thread] = []  # (threading: imported with the first)
        self._done = False

    def begin(self) -> None:
        """The stop signal came (or the agent ended): the budget starts, root's writers
        stop waiting for locks, and the background hooks and the devcontainer's
        commands are told to stop, beside the agent."""
        if self.deadline is not None:
            return
        self.deadline = time.monotonic() + self.grace
        statefile = sys.modules.get("initd.state.statefile")  # (none imported: no writer)
        if statefile is not None:
            statefile.STOPPING.set()
        for stop in (self.background.stop if self.background else None,
                     self.lifecycle.stop if self.lifecycle else None):
            if stop is not None:
                self._thread(stop)

    def finish(self) -> None:
        """After the agent: the hook service with what is left of the budget, then wait
        for the rest (each bounded by its grace). Once; whatever was never started is
        not there to stop."""
        if self._done:
            return
        self._done = True
        self.begin()
        assert self.deadline is not None
        if self.services is not None:  # (dependents first: services.py), beside the
            services, deadline = self.services, self.deadline  # hook service's stop
            self._thread(lambda: services.stop(max(deadline, time.monotonic() + FLOOR)))
        if self.service is not None:
            left = max(FLOOR, self.deadline - time.monotonic())
            self.service.stop(signal.SIGTERM, grace=left)
            self.service.close()
        for thread in self._threads:
            thread.join()

    def _thread(self, stop: Callable[[], None]) -> None:
        import threading

        thread = threading.Thread(target=stop, name="shutdown", daemon=True)
        try:
            thread.start()
        except RuntimeError:  # no thread (a pids limit): in line, one after the other
            stop()
            return
        self._threads.append(thread)
