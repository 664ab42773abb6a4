"""One supervised child: spawn it, notice its exit, restart it by policy, stop it."""

from __future__ import annotations

import signal
import time

from initd import proc
from initd.backoff import Backoff
from initd.log import Logger
from initd.settings import Restart
from initd.states import State


class Supervised:
    def __init__(self, name: str, spec: proc.Spec, restart: Restart, backoff: Backoff,
                 grace: float, log: Logger) -> None:
        self.name = name
        self.spec = spec
        self.restart = restart
        self.backoff = backoff
        self.grace = grace
        self.log = log.bind(service=name)
        self.state = State.STOPPED
        self.child: proc.Child | None = None
        self.last_code: int | None = None
        self.restart_at = 0.0

    def start(self) -> None:
        """STOPPED/BACKOFF -> RUNNING, or straight to an exit when exec fails (127/126)."""
        try:
            self.child = proc.spawn(self.spec)
        except proc.ExecFailed as err:
            self.log.error(str(err), code=err.exit_code)
            self._exited(err.exit_code, ran_for=0.0)
            return
        self.state = State.RUNNING
        self.log.info("started", pid=self.child.pid, argv=list(self.spec.argv))

    def waitables(self) -> list[proc.Child]:
        return [self.child] if self.child is not None else []

    def timeout(self) -> float | None:
        """How long the caller may sleep before ``tick`` has something to do."""
        if self.state is State.BACKOFF:
            return max(0.0, self.restart_at - time.monotonic())
        return None

    def tick(self) -> None:
        """Notice an exit, or restart when a backoff delay is over."""
        if self.child is not None and self.child.poll() is not None:
            child, self.child = self.child, None
            # The leader is gone; whatever it left in its group goes with it, so a
            # restarted agent never overlaps its predecessor's helpers.
            code = proc.exit_status(proc.stop(child, signal.SIGTERM, self.grace))
            self._exited(code, ran_for=time.monotonic() - child.started)
        if self.state is State.BACKOFF and time.monotonic() >= self.restart_at:
            self.start()

    def forward(self, sig: int) -> None:
        if self.child is not None:
            self.child.signal_group(sig)

    def stop(self, sig: int) -> int:
        """RUNNING -> STOPPING -> EXITED: ``sig`` to the group, grace, KILL. Returns the code."""
        if self.child is not None:
            self.state = State.STOPPING
            self.last_code = proc.exit_status(proc.stop(self.child, sig, self.grace))
            self.child = None
        self.state = State.EXITED
        return self.last_code if self.last_code is not None else 128 + sig

    def _exited(self, code: int, ran_for: float) -> None:
        self.last_code = code
        self.log.info("exited", code=code, ran_for_s=round(ran_for, 3))
        wants_restart = self.restart is Restart.ALWAYS or (
            self.restart is Restart.ON_FAILURE and code != 0)
        if not wants_restart:
            self.state = State.EXITED
            return
        delay = self.backoff.next_delay(time.monotonic(), ran_for)
        if delay is None:
            self.state = State.FATAL
            self.log.error("crash loop: giving up", code=code,
                           restarts=self.backoff.max_restarts, window_s=self.backoff.window)
            return
        self.state = State.BACKOFF
        self.restart_at = time.monotonic() + delay
        self.log.warning("restarting after backoff", code=code, delay_s=delay)
