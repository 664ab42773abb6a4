"""One supervised child: spawn it, see it ready, notice its exit, restart it by policy, stop it.

The supervisor's loop never waits on a child: when a leader exits, what it left in its
group is stopped (TERM, grace, KILL) in a worker (leftovers.py) while the loop goes on
passing signals (invariant 9); the child is restarted only once that is done, so two
generations never overlap.
"""

from __future__ import annotations

import signal
import time
from typing import TYPE_CHECKING

from initd.config.log import Logger
from initd.config.values import Restart
from initd.errors import InitdError
from initd.pid1.log import write_line
from initd.process import spawn
from initd.state import clock
from initd.supervisor.backoff import Backoff
from initd.supervisor.leftovers import POLL, Leftovers
from initd.supervisor.states import State

if TYPE_CHECKING:  # only an agent with --ready-port/--ready-url pays for the import
    from collections.abc import Callable
    from typing import Any, Protocol

    from initd.supervisor import readiness
    from initd.supervisor.sigchan import SignalChannel

    class Beside(Protocol):  # what is watched during a stop besides it (deferred.py)
        def watched(self) -> list[Any]: ...
        def notice(self) -> None: ...


class Supervised:
    announces_ready = False  # True: the child itself says when it is ready (mark_ready)

    def __init__(self, name: str, spec: spawn.Spec, restart: Restart, backoff: Backoff,
                 grace: float, log: Logger, ready_check: readiness.Check | None = None,
                 ready_by: str = "") -> None:
        self.name = name
        self.spec = spec
        self.restart = restart
        self.backoff = backoff
        self.grace = grace
        self.log = log.bind(service=name)
        self.ready_check = ready_check
        self.ready_by = ready_by  # how readiness is judged, for people: "port 8080"
        self.state = State.STOPPED
        self.child: spawn.Child | None = None
        self.leftovers: Leftovers | None = None  # what the last leader left, being stopped
        self.probe: readiness.Probe | None = None
        self.last_code: int | None = None
        self.restart_at = 0.0
        self.starts = 0
        self.started_at: float | None = None  # wall clock, for the API
        self.ready_at: float | None = None

    # --- points a subclass may extend (the hook service passes fds, keeps a channel)

    def make_spec(self) -> spawn.Spec:
        return self.spec

    def spawned(self, child: spawn.Child) -> None:
        """Just started (the child exists)."""

    def ended(self, child: spawn.Child, deadline: float) -> None:
        """Its leader exited, or its stop begins: what it left in its group is stopped
        by ``deadline`` (and KILL_SETTLE), beside whatever this adds."""

    # --- the lifecycle

    def start(self) -> None:
        """STOPPED/BACKOFF -> STARTING (-> RUNNING at once without a readiness check), or
        straight to an exit when exec fails (127/126)."""
        self.starts += 1
        self.started_at, self.ready_at = time.time(), None
        try:
            spec = self.make_spec()  # (the hook service's channel: EMFILE is an InitdError)
            self.child = spawn.spawn(spec)
        except spawn.ExecFailed as err:
            # One plain line, whatever the log format, as tini says it: what to fix.
            write_line(f"initd: {err}")
            self.log.info("could not start", error=str(err), code=err.exit_code)
            self._exited(err.exit_code, ran_for=0.0)
            return
        except InitdError as err:  # no fork (a pids cgroup at its limit), no memory, no
            # working directory, no descriptor (EMFILE): initd's own failure (125), and the
            # restart policy decides (the hook service's: always, with the backoff), never
            # the supervisor's death
            write_line(f"initd: {err}")
            self.log.info("could not start", error=str(err), code=125)
            self._exited(125, ran_for=0.0)
            return
        self.state = State.STARTING
        self.spawned(self.child)
        self.log.info("started", pid=self.child.pid, argv=list(spec.argv))
        if self.ready_check is not None:
            from initd.supervisor import readiness

            try:
                self.probe = readiness.Probe(self.ready_check)
            except (RuntimeError, OSError) as err:  # no thread (a pids limit), no pipe
                self.log.warning("readiness not probed (cannot start a thread or make a "
                                 "pipe: a pids or descriptor limit?): the agent counts as "
                                 "ready once started", error=str(err))
                self.mark_ready()
        elif not self.announces_ready:
            self.mark_ready()

    def mark_ready(self) -> None:
        """STARTING -> RUNNING."""
        if self.state is not State.STARTING:
            return
        self.state = State.RUNNING
        self.ready_at = time.time()
        self._drop_probe()
        if self.ready_check is not None or self.ready_by:
            self.log.info("ready", by=self.ready_by or "check",
                          after_ms=round((self.ready_at - (self.started_at or 0)) * 1000, 1))

    def waitables(self) -> list[Any]:
        """What the loop's ``poll`` watches for this child: its pidfd, its readiness probe,
        the end of the stop of what its last leader left."""
        leftovers = self.leftovers.waitables() if self.leftovers is not None else []
        return [*(w for w in (self.child, self.probe) if w is not None), *leftovers]

    def timeout(self) -> float | None:
        """How long the caller may sleep before ``tick`` has something to do."""
        if self.leftovers is not None:
            return self.leftovers.timeout()
        if self.state is State.BACKOFF:
            return max(0.0, self.restart_at - time.monotonic())
        return None

    def tick(self) -> None:
        """Notice readiness, an exit, or the end of a backoff delay."""
        if self.probe is not None and self.probe.passed.is_set():
            self.mark_ready()
        returncode = self.child.poll() if self.child is not None else None
        if self.child is not None and returncode is not None:
            # STARTING/RUNNING -> STOPPING: the leader is gone; whatever it left in its
            # group goes with it (TERM, grace, KILL), in a worker: the loop goes on passing
            # signals meanwhile, and the restart waits for it, so a restarted agent never
            # overlaps its predecessor's helpers.
            child, self.child = self.child, None
            self._drop_probe()
            self.state = State.STOPPING
            self.leftovers = Leftovers(child, returncode, self.grace, self.log)
            self.ended(child, time.monotonic() + self.grace)
        if self.leftovers is not None and self.leftovers.done.is_set():
            leftovers, self.leftovers = self.leftovers, None  # STOPPING -> BACKOFF/EXITED/FATAL
            leftovers.close()
            self._said_denied(leftovers.child)
            self._exited(leftovers.code, ran_for=leftovers.ran_for)
        if self.state is State.BACKOFF and time.monotonic() >= self.restart_at:
            self.start()

    def forward(self, sig: int) -> None:
        if self.child is not None:
            self.child.signal_group(sig)
        elif self.leftovers is not None:  # its group, still being stopped: passed on too
            self.leftovers.child.signal_group(sig)

    def stop(self, sig: int, signals: SignalChannel | None = None,
             grace: float | None = None, beside: Beside | None = None) -> int:
        """-> STOPPING -> EXITED: ``sig`` to the group, grace (its own, or ``grace``:
        what is left of initd's), KILL. Returns the code. With ``signals``, whatever
        arrives meanwhile goes to the group as well; ``beside`` is watched too (the
        hook service not started yet: a connection starts it). What an exited leader
        left, still being stopped, is waited for within the same grace."""
        if grace is not None:
            self.grace = grace
        deadline = time.monotonic() + self.grace
        self._drop_probe()
        if self.child is not None:
            self.state = State.STOPPING
            child = self.child
            self.ended(child, deadline)
            meanwhile = None if signals is None and beside is None else (
                lambda: [*([signals] if signals is not None else []),
                         *(beside.watched() if beside is not None else [])],
                lambda: _passed_on(signals, child.signal_group, beside))
            self.last_code = spawn.exit_status(spawn.stop(child, sig, self.grace, meanwhile))
            self._said_denied(child)
            self.child = None
        elif self.leftovers is not None:
            self.state = State.STOPPING
            self._stop_leftovers(sig, deadline, signals, beside)
        self.state = State.EXITED
        return self.last_code if self.last_code is not None else 128 + sig

    def describe(self) -> dict[str, Any]:
        """The child as the control API shows it."""
        return {"state": self.state.value, "ready": self.state is State.RUNNING,
                "pid": self.child.pid if self.child is not None else None,
                "restarts": max(0, self.starts - 1), "lastExitCode": self.last_code,
                "startedAt": _iso(self.started_at), "readyAt": _iso(self.ready_at),
                "readyBy": self.ready_by or None}

    def _stop_leftovers(self, sig: int, deadline: float, signals: SignalChannel | None,
                        beside: Beside | None) -> None:
        """The stop came while what the last leader left was being stopped: ``sig`` is
        passed on to it too, and it is waited for within this stop's budget (KILL at its
        end, whatever the worker's own), every signal passed on meanwhile."""
        leftovers, self.leftovers = self.leftovers, None
        assert leftovers is not None
        group = leftovers.child.signal_group
        group(sig)
        for until in (deadline, deadline + spawn.KILL_SETTLE):
            while not leftovers.done.is_set() and (left := until - time.monotonic()) > 0:
                fds = leftovers.waitables()
                spawn.wait_fds([*fds, *([signals] if signals is not None else []),
                                *(beside.watched() if beside is not None else [])],
                               left if fds else min(left, POLL))
                _passed_on(signals, group, beside)
            if leftovers.done.is_set():
                break
            group(signal.SIGKILL)
        leftovers.close()
        self._said_denied(leftovers.child)
        self.last_code = leftovers.code

    def _said_denied(self, child: spawn.Child) -> None:
        if child.denied:
            self.log.warning("not allowed to signal its process group (no CAP_KILL?): "
                             "left to PID 1, whose exit ends the container's processes",
                             pid=child.pid)

    def _drop_probe(self) -> None:
        if self.probe is not None:
            self.probe.cancel()
            self.probe = None

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


def _passed_on(signals: SignalChannel | None, send: Callable[[int], object],
               beside: Beside | None) -> None:
    """During a stop: the signals that came passed on with ``send``; ``beside`` looked at."""
    if signals is not None:
        signals.forward_to(send)
    if beside is not None:
        beside.notice()


def _iso(when: float | None) -> str | None:
    if when is None:
        return None
    return clock.iso(when)
