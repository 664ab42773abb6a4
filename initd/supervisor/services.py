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
import sys
import threading
import time
from typing import TYPE_CHECKING

from initd.errors import InitdError
from initd.process import spawn, users
from initd.supervisor.states import State
from initd.supervisor.unit import Unit

if TYPE_CHECKING:
    from typing import Any

    from initd.config import settings
    from initd.config.log import Logger
    from initd.config.services import Service


LOG_DRAIN = 1.0  # seconds a stopped service's logger has at least for its last lines
MIN_STOP = 0.5  # seconds a wave of the stop gets at least, when those before took it all


class ServiceSet:
    """Every service of the image, in start order; ticked by the supervisor's loop."""

    def __init__(self, units: list[Unit], order: list[str], logger: Logger,
                 log_dir: str | None = None, json: bool = True) -> None:
        self.units = {unit.name: unit for unit in units}
        self.log_dir = log_dir  # None: their output is initd's (tests of the set alone)
        self.json = json
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
                self._logs(unit)
                unit.start()

    def _logs(self, unit: Unit) -> None:
        """Its logger, started before it: its directory made (a refusal said, and the
        logger runs all the same: its lines still reach initd's log)."""
        if self.log_dir is None:
            return
        from initd.supervisor.servicelog import ServiceLog

        unit.logs = logs = ServiceLog(unit.name, unit.account, self.log_dir,
                                      unit.service.log_max_bytes, unit.service.log_backups,
                                      self.json, self.log)
        try:
            logs.prepare()
        except InitdError as err:
            self.log.error("its log files are not kept: its lines go to initd's log only",
                           service=unit.name, error=str(err))
        try:
            logs.start()
        except InitdError as err:
            self.log.error("no logger: its output goes to initd's", service=unit.name,
                           error=str(err))
            unit.logs = None

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
        elif unit.held and unit.state is State.EXITED:
            shown["state"] = "stopped"
        elif unit.service.oneshot and unit.state is State.EXITED:
            shown["state"] = "done" if unit.last_code == 0 else "failed"
        shown.update(critical=unit.service.critical, user=unit.account.name
                     if unit.account is not None else None,
                     oneshot=unit.service.oneshot)
        status = getattr(unit.notifier, "status", None)
        if status:
            shown["status"] = status
        return shown

    def control(self, name: str, verb: str, uid: int | None) -> dict[str, Any]:
        """A ``start``, ``stop`` or ``restart`` the agent asked for, through its hook
        service: only of a service that runs as ``uid``, the agent's own (None: initd is
        not root, and every service runs as initd's user, the agent's). Never waits."""
        unit = self.units.get(name)
        if unit is None:
            return {"status": 404, "error": f"no service {name!r} (known: "
                    f"{', '.join(self.units) or 'none'})"}
        owner = unit.account.uid if unit.account is not None else os.geteuid()
        if uid is not None and owner != uid:
            return {"status": 403, "error": f"service {name!r} runs as uid {owner}, not as "
                    "the agent: only the image's operator may control it"}
        if name not in self.started:
            return {"status": 409, "error": f"service {name!r} has not started: it waits "
                    "for what it needs"}
        result = unit.request(verb)
        self.log.info("control", service=name, verb=verb, result=result)
        return {"status": 200, "result": result}

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
            for name in wave:  # (its logger: its last lines, then gone)
                self.units[name].close(max(deadline, time.monotonic() + LOG_DRAIN))
            self.log.info("stopped", services=wave)
        for unit in self.units.values():
            unit.close(time.monotonic() + LOG_DRAIN)


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
            unit.close(time.monotonic())
        raise
    return ServiceSet(units, start_order({s.name: s for s in config.services}), logger,
                      log_dir(config), config.log_format == "json" or (
                          config.log_format == "auto" and not sys.stderr.isatty()))


def log_dir(config: settings.Settings) -> str:
    """Where the services' logs go: the setting, else /var/log/initd as root, else
    $XDG_STATE_HOME/initd/services (~/.local/state: the services' user is initd's)."""
    if config.services_log_dir is not None:
        return config.services_log_dir
    if os.geteuid() == 0:
        return "/var/log/initd"
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return os.path.join(state, "initd", "services")


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
