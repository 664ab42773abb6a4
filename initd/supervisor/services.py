"""The image's services (config/services.py), supervised beside the agent.

Each is a Supervised child (supervised.py: its group, its restart policy and backoff,
the stop of what its leader left), in a session of its own, as its user. The set starts
each once what it is ``after`` is satisfied (a longrun ready, a oneshot exited 0), never
one whose dependency failed for good (``blocked``); notices a service that is not ready
within its ``ready_timeout`` (stopped, and its restart policy decides); says when a
``critical`` one has ended for good, which stops the container; and stops them all in the
reverse of their start order, dependents first, within one deadline (shutdown.py).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import TYPE_CHECKING

from initd.errors import InitdError
from initd.process import spawn, users
from initd.supervisor.backoff import Backoff
from initd.supervisor.notify import NotifyFd, NotifySocket
from initd.supervisor.states import State
from initd.supervisor.supervised import Supervised

if TYPE_CHECKING:
    from typing import Any

    from initd.config import settings
    from initd.config.log import Logger
    from initd.config.services import Service


MIN_STOP = 0.5  # seconds a wave of the stop gets at least, when those before took it all


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
        self.announces_ready = kind in ("notify", "notify_fd")
        self.notifier: NotifySocket | NotifyFd | None = None
        self.kill_at: float | None = None  # not ready in time: KILL then, if still there
        self.started_mono: float | None = None  # when the current start began
        if kind == "notify":
            try:
                self.notifier = NotifySocket(service.name, account.uid if account else None)
            except OSError as err:
                raise InitdError(f"service {service.name}: cannot make its NOTIFY_SOCKET: "
                                 f"{err.strerror}") from None

    def make_spec(self) -> spawn.Spec:
        kind = (self.service.ready or (None, None))[0]
        if isinstance(self.notifier, NotifySocket):
            self.notifier.forget()
            return self.spec._replace(env={**self.spec.env, **self.notifier.env()})
        if kind == "notify_fd":
            if self.notifier is not None:
                self.notifier.close()
            self.notifier = made = NotifyFd(int(self.service.ready[1]))  # type: ignore[index]
            argv, fds = made.wrap(self.spec.argv)
            return self.spec._replace(argv=argv, pass_fds=fds)
        return self.spec

    def spawned(self, child: spawn.Child) -> None:
        if isinstance(self.notifier, NotifyFd):
            self.notifier.started()

    def waitables(self) -> list[Any]:
        listening = self.notifier is not None and self.state is State.STARTING \
            and not self.notifier.ended
        return [*super().waitables(), *([self.notifier] if listening else [])]

    def timeout(self) -> float | None:
        mine = None
        if self.state is State.STARTING and self.started_mono is not None:
            due = self.kill_at if self.kill_at is not None else \
                self.started_mono + self.service.ready_timeout
            mine = max(0.0, due - time.monotonic())
        theirs = super().timeout()
        return mine if theirs is None else theirs if mine is None else min(mine, theirs)

    def start(self) -> None:
        self.started_mono = time.monotonic()
        self.kill_at = None
        super().start()

    def tick(self) -> None:
        if self.state is State.STARTING and self.notifier is not None \
                and not self.notifier.ended and self.notifier.ready():  # (non-blocking)
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
        gave up or that its policy does not restart)."""
        if self.service.oneshot:
            return self.state in (State.EXITED, State.FATAL) and self.last_code != 0
        return self.state.final

    def close(self) -> None:
        if self.notifier is not None:
            self.notifier.close()
            self.notifier = None


class ServiceSet:
    """Every service of the image, in start order; ticked by the supervisor's loop."""

    def __init__(self, units: list[Unit], order: list[str], logger: Logger) -> None:
        self.units = {unit.name: unit for unit in units}
        self.order = order
        self.log = logger
        self.blocked: set[str] = set()
        self.gave_up: tuple[str, int] | None = None  # a critical service's (name, code)
        self.started: list[str] = []  # in the order they were first started

    def start_due(self) -> None:
        """Start each service whose dependencies are satisfied; block each whose
        dependency failed for good."""
        for name in self.order:
            unit = self.units[name]
            if name in self.started or name in self.blocked:
                continue
            deps = [self.units[dep] for dep in unit.service.after]
            failed = [dep.name for dep in deps if dep.failed_for_good() or dep.name in self.blocked]
            if failed:
                self.blocked.add(name)
                self.log.error("not started: what it needs failed", service=name,
                               needs=failed)
                self._critical(unit, 1)
                continue
            if all(dep.satisfied() for dep in deps):
                self.started.append(name)
                unit.start()

    def waitables(self) -> list[Any]:
        return [w for unit in self.units.values() for w in unit.waitables()]

    def timeout(self) -> float | None:
        found = [t for t in (unit.timeout() for unit in self.units.values()) if t is not None]
        return min(found) if found else None

    def tick(self) -> None:
        for unit in self.units.values():
            unit.tick()
            if unit.failed_for_good():
                self._critical(unit, unit.last_code if unit.last_code is not None else 1)
        self.start_due()

    def _critical(self, unit: Unit, code: int) -> None:
        if unit.service.critical and self.gave_up is None:
            self.gave_up = unit.name, code or 1
            self.log.error("a critical service ended for good: stopping the container",
                           service=unit.name, code=code)

    def describe(self) -> dict[str, Any]:
        return {name: self._describe(unit) for name, unit in self.units.items()}

    def _describe(self, unit: Unit) -> dict[str, Any]:
        shown = unit.describe()
        if unit.name in self.blocked:
            shown["state"] = "blocked"
        elif unit.name not in self.started:
            shown["state"] = "waiting"
        elif unit.service.oneshot and unit.state is State.EXITED:
            shown["state"] = "done" if unit.last_code == 0 else "failed"
        shown.update(critical=unit.service.critical, user=unit.account.name
                     if unit.account is not None else None,
                     oneshot=unit.service.oneshot)
        status = getattr(unit.notifier, "status", None)
        if status:
            shown["status"] = status
        return shown

    def stop(self, deadline: float) -> None:
        """Dependents before what they depend on, each wave's services at once (its stop
        signal to its group, KILL at ``deadline``), the whole within ``deadline``."""
        waves = _waves([n for n in reversed(self.started)], self.units)
        for wave in waves:
            threads = []
            for name in wave:
                unit = self.units[name]
                left = max(MIN_STOP, deadline - time.monotonic())
                threads.append(threading.Thread(
                    target=unit.stop, args=(unit.service.stop_signal,),
                    kwargs={"grace": left}, name=f"stop-{name}", daemon=True))
            for thread in threads:
                try:
                    thread.start()
                except RuntimeError:  # no thread (a pids limit): in line
                    thread.run()
            for thread in threads:
                if thread.ident is not None:
                    thread.join()
            self.log.info("stopped", services=wave)
        for unit in self.units.values():
            unit.close()


def _waves(names: list[str], units: dict[str, Unit]) -> list[list[str]]:
    """``names`` (started ones, latest first) in stop waves: a service stops only once
    every started service that depends on it has."""
    left, waves = list(names), []
    while left:
        wave = [n for n in left if not any(n in units[other].service.after
                                           for other in left if other != n)]
        wave = wave or left[:1]  # (no cycle is possible: config/services.py refused one)
        waves.append(wave)
        left = [n for n in left if n not in wave]
    return waves


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


def build(config: settings.Settings, agent: users.Account | None,
          logger: Logger) -> ServiceSet | None:
    """The image's services, their users resolved (an error names the service), or None."""
    if not config.services:
        return None
    from initd.config.services import start_order

    units: list[Unit] = []
    try:
        for service in config.services:
            account = _account(service, agent, config.config or "initd.yaml")
            env = spawn.environment(os.environ, account, dict(service.environment),
                                    remove=(*config.secret, "INITD_SOCKET", "NOTIFY_SOCKET"))
            spec = spawn.Spec(argv=service.argv, env=env, cwd=service.directory,
                              account=account, new_session=True)
            units.append(Unit(service, spec, account, config.grace, logger))
    except InitdError:
        for unit in units:
            unit.close()
        raise
    return ServiceSet(units, start_order({s.name: s for s in config.services}), logger)


def _account(service: Service, agent: users.Account | None,
             path: str) -> users.Account | None:
    """Who it runs as: its ``user``, else the agent user; as root, never root by default."""
    if os.geteuid() != 0:
        return None  # (not root: everything runs as initd's own user, as the agent does)
    if service.user is None:
        if agent is None:
            raise InitdError(f"{path}: services.{service.name}.user: no agent user to run it "
                             "as (--user): say `user: root` to run it as root")
        return agent
    try:
        return users.lookup(service.user)
    except InitdError as err:
        raise InitdError(f"{path}: services.{service.name}.user: {err}") from None
