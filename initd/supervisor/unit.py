"""One of the image's services (config/services.py) as a supervised child: Supervised
(its group, restart policy and backoff, the stop of what its leader left), with its
readiness said by itself (sd_notify, s6's notification fd) or checked (a port, a URL, a
command run as its user), a deadline for it (``ready_timeout``: stopped, then KILLed at
the grace's end, and its restart policy decides), and the start, stop and restart asked
through the control API, none of which ever waits (services.py decides who may ask).
"""

from __future__ import annotations

import signal
import time
from typing import TYPE_CHECKING

from initd.errors import InitdError
from initd.process import spawn, users
from initd.supervisor.backoff import Backoff
from initd.supervisor.notify import NotifyFd, NotifySocket
from initd.supervisor.pace import Bucket
from initd.supervisor.states import State
from initd.supervisor.supervised import Supervised

if TYPE_CHECKING:
    from typing import Any

    from initd.config.log import Logger
    from initd.config.services import Service
    from initd.supervisor.servicelog import ServiceLog


NOTES_RATE = 20.0  # reads of a service's notifications a second, before it is ready
NOTES_BURST = 32


class Unit(Supervised):
    """One service: Supervised, with its readiness said by itself (sd_notify, s6's fd)
    and a deadline for it."""

    def __init__(self, service: Service, spec: spawn.Spec, account: users.Account | None,
                 grace: float, logger: Logger) -> None:
        kind, value = service.ready or (None, None)
        super().__init__(service.name, spec, service.restart,
                         Backoff(max_restarts=service.max_restarts,
                                 window=service.restart_window),
                         grace, logger, **_check(kind, value, account))
        self.service = service
        self.account = account
        self.logs: ServiceLog | None = None  # its output's logger (servicelog.py)
        self.announces_ready = kind in ("notify", "notify_fd")
        self.notifier: NotifySocket | NotifyFd | None = None
        # what root reads of it, at most: a service flooding its socket or fd before it
        # is ready (the agent's, maybe) costs root that, never in proportion to its writes
        self.notes = Bucket(NOTES_RATE, NOTES_BURST)
        self.kill_at: float | None = None  # not ready in time: KILL then, if still there
        self.started_mono: float | None = None  # when the current start began
        self.held = False  # stopped on request: not restarted until asked to start
        self.again = False  # restarted on request: started again at its exit, at once
        self.stop_kill_at: float | None = None  # a stop asked for: KILL then

    def make_spec(self) -> spawn.Spec:
        """Its spec, its output to its logger (the same one for each start), and its
        notification channel made anew."""
        spec = self.spec
        if self.logs is not None:
            out = self.logs.output_fd()
            spec = spec._replace(stdout=out, stderr=out)
        kind = (self.service.ready or (None, None))[0]
        if kind == "notify" and self.notifier is None:  # (made at its first start)
            try:
                self.notifier = NotifySocket(self.name, self.account.uid if self.account
                                             else None)
            except OSError as err:  # a failed start: its restart policy decides
                raise InitdError(f"service {self.name}: cannot make its NOTIFY_SOCKET: "
                                 f"{err.strerror}") from None
        if isinstance(self.notifier, NotifySocket):
            self.notifier.forget()
            return spec._replace(env={**spec.env, **self.notifier.env()})
        if kind == "notify_fd":
            if self.notifier is not None:
                self.notifier.close()
            self.notifier = made = NotifyFd(int(self.service.ready[1]))  # type: ignore[index]
            argv, fds = made.wrap(spec.argv)
            return spec._replace(argv=argv, pass_fds=fds)
        return spec

    def spawned(self, child: spawn.Child) -> None:
        if isinstance(self.notifier, NotifyFd):
            self.notifier.started()

    def _listening(self) -> bool:
        return self.notifier is not None and self.state is State.STARTING \
            and not self.notifier.ended

    def waitables(self) -> list[Any]:
        listening = self._listening() and self.notes.ready()
        logger = self.logs is not None and self.logs.fileno() >= 0
        return [*super().waitables(), *([self.notifier] if listening else []),
                *([self.logs] if logger else [])]

    def timeout(self) -> float | None:
        due = [] if self.stop_kill_at is None else [self.stop_kill_at]
        if self.state is State.STARTING and self.started_mono is not None:
            due.append(self.kill_at if self.kill_at is not None else
                       self.started_mono + self.service.ready_timeout)
        if self._listening() and not self.notes.ready():
            due.append(time.monotonic() + self.notes.wait())
        revive = self.logs.revive_in() if self.logs is not None else None
        due += [time.monotonic() + revive] if revive is not None else []
        waits = [max(0.0, at - time.monotonic()) for at in due]
        theirs = super().timeout()
        waits += [theirs] if theirs is not None else []
        return min(waits) if waits else None

    def start(self) -> None:
        self.started_mono = time.monotonic()
        self.kill_at = None
        super().start()

    def request(self, verb: str) -> str:
        """``start``, ``stop`` or ``restart`` asked through the control API (services.py's
        caller checked who asks): never waits; its stop signal, then KILL at the grace."""
        if verb == "start":
            if self.child is not None or self.leftovers is not None:
                return "already running"
            self.held = False
            self.backoff.restarts.clear()  # (a person's start: a crash loop begins anew)
            self.backoff.failures = 0
            self.start()
            return "started"
        if self.child is None:
            if verb == "restart" and self.leftovers is None:
                return self.request("start")
            self.held = verb == "stop"
            if self.state is State.BACKOFF and self.held:
                self.state = State.EXITED
            return "not running" if verb == "stop" else "restarting"
        self.held, self.again = verb == "stop", verb == "restart"
        self.child.signal_group(self.service.stop_signal)
        self.stop_kill_at = time.monotonic() + self.grace
        return "stopping" if verb == "stop" else "restarting"

    def _exited(self, code: int, ran_for: float) -> None:
        self.stop_kill_at = None
        if self.held or self.again:
            self.last_code = code
            self.log.info("stopped on request" if self.held else "restarted on request",
                          code=code)
            self.state = State.EXITED if self.held else State.BACKOFF
            self.restart_at = time.monotonic()
            self.again = False
            return
        super()._exited(code, ran_for)

    def tick(self) -> None:
        if self.logs is not None:  # (a logger that died: again, on the same pipe)
            self.logs.revive()
        if self.stop_kill_at is not None and self.child is not None \
                and time.monotonic() >= self.stop_kill_at:
            self.child.signal_group(signal.SIGKILL)
            self.stop_kill_at = None
        if self._listening() and self.notes.take() \
                and self.notifier.ready():  # type: ignore[union-attr]  # (non-blocking)
            self.mark_ready()
        if self.state is State.STARTING and self.child is not None:
            self._not_ready_in_time()
        super().tick()

    def _not_ready_in_time(self) -> None:
        assert self.child is not None and self.started_mono is not None
        now = time.monotonic()
        if self.kill_at is None and now >= self.started_mono + self.service.ready_timeout:
            self.log.warning("not ready in time: stopped (its restart policy decides)",
                             ready_timeout_s=self.service.ready_timeout)
            self.child.signal_group(self.service.stop_signal)
            self.kill_at = now + self.grace
        elif self.kill_at is not None and now >= self.kill_at:
            self.child.signal_group(signal.SIGKILL)
            self.kill_at = now + 3600  # (once)

    def satisfied(self) -> bool:
        """What depends on it may start: ready (a longrun), exited 0 (a oneshot)."""
        if self.service.oneshot:
            return self.state is State.EXITED and self.last_code == 0
        return self.state is State.RUNNING

    def failed_for_good(self) -> bool:
        """Ended and never coming back by itself (a oneshot that failed, a longrun that
        gave up or that its policy does not restart); one stopped on request is not."""
        if self.held:
            return False
        if self.service.oneshot:
            return self.state in (State.EXITED, State.FATAL) and self.last_code != 0
        return self.state.final

    def close(self, deadline: float) -> None:
        """Once stopped: its logger reads its last lines (KILLed at ``deadline``)."""
        if self.logs is not None:
            self.logs.close(deadline)
            self.logs = None
        if self.notifier is not None:
            self.notifier.close()
            self.notifier = None


def _check(kind: str | None, value: Any, account: users.Account | None) -> dict[str, Any]:
    """The readiness check a thread runs (port, http, exec), as supervised.py takes it."""
    if kind not in ("port", "http", "exec"):
        return {"ready_by": {"notify": "NOTIFY_SOCKET", "notify_fd": f"fd {value}"}.get(
            kind or "", "")}
    from initd.supervisor import readiness

    if kind == "port":
        return {"ready_check": readiness.port_check(int(value)), "ready_by": f"port {value}"}
    if kind == "http":
        return {"ready_check": readiness.url_check(str(value)), "ready_by": str(value)}
    return {"ready_check": readiness.exec_check(tuple(value), account),
            "ready_by": "exec " + " ".join(value)[:80]}
