"""Steps 6-7 of the boot sequence (ARCHITECTURE.md): supervision until the agent is done
or initd is told to stop, and the supervisor's view of it all, for the probes and the
hook service.

The loop waits in one ``poll`` (invariant 13) on the signals PID 1 passed on and every
child's waitables (pidfds, readiness probes, the hook service's channel, the services'
notifications), then ticks each child: nothing here ever waits on one child alone.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from initd import __version__
from initd.config import log
from initd.pid1.signals import signal_name
from initd.process import spawn

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from initd.supervisor.deferred import DeferredService
    from initd.supervisor.health import Probes
    from initd.supervisor.services import ServiceSet
    from initd.supervisor.sigchan import SignalChannel
    from initd.supervisor.supervised import Supervised

PROBLEMS_LOOK = 2.0  # seconds between looks at problems that end by themselves


def describe(agent: Supervised, service: DeferredService | None, phase: str,
             services: ServiceSet | None = None) -> dict[str, Any]:
    """The supervisor's view, for /v1/health and /v1/ready, /healthz and /readyz: with
    what it cannot keep (hook results a full disk refused: written when it allows)."""
    mine: dict[str, Any] = {"pid": os.getpid(), "phase": phase, "version": __version__}
    status = sys.modules.get("initd.hooks.status.store")  # (only a boot with hooks has it)
    problems = status.backlog_problems() if status is not None else []
    if problems:
        mine["problems"] = problems
    described = {"initd": mine, "agent": agent.describe(),
                 "service": service.describe() if service is not None else None}
    if services is not None:
        described["services"] = services.describe()
    return described


def tell(state: dict[str, Any], service: DeferredService | None,
         probes: Probes | None) -> None:
    if service is not None:
        service.push(state)
    if probes is not None:  # (and for /metrics, what the hook service counted)
        probes.update(state, service.hook_counts() if service is not None else None)


def supervise(agent: Supervised, signals: SignalChannel, logger: log.Logger,
              service: DeferredService | None = None, probes: Probes | None = None,
              stopping: Callable[[], None] | None = None,
              up: Callable[[], None] | None = None, services: ServiceSet | None = None
              ) -> int:
    """Until the agent is done: forward signals, restart by policy, stop on the stop signal.
    The hook service, if any, is kept alive alongside and told of every change; only the
    agent's fate ends it. ``up`` is called once, when the agent is first running (ready,
    with a readiness check): devcontainer.json's postAttachCommand waits for it. A critical
    service that ends for good (``services``) stops the agent as the stop signal does,
    and its code is the container's."""
    children: list[Supervised | DeferredService | ServiceSet] = [
        agent, *([service] if service is not None else []),
        *([services] if services is not None else [])]
    while not agent.state.final:
        if services is not None and services.gave_up is not None:
            return gave_up(agent, signals, logger, service, services, probes, stopping)
        state = describe(agent, service, "running", services)
        tell(state, service, probes)
        if up is not None and state["agent"]["ready"]:
            up()
            up = None  # (once)
        fds = [signals.fileno(), *(w.fileno() for child in children for w in child.waitables())]
        timeouts = [t for t in (child.timeout() for child in children) if t is not None]
        if state["initd"].get("problems"):  # (look again: they end without waking us)
            timeouts.append(PROBLEMS_LOOK)
        spawn.wait_fds(fds, min(timeouts) if timeouts else None)  # (poll: invariant 13)
        received = signals.drain()
        for at, sig in enumerate(received):
            if sig in signals.stop_signals:
                # (what came after it is passed on during the stop, after it: invariant 9)
                signals.put_back(received[at + 1:])
                # not ready from now on: traffic goes elsewhere
                tell(describe(agent, service, "stopping", services), service, probes)
                if stopping is not None:  # what stops beside the agent (shutdown.py)
                    stopping()
                return stop(agent, sig, signals, logger, service)
            agent.forward(sig)
        for child in children:
            child.tick()
    assert agent.last_code is not None
    return agent.last_code


def gave_up(agent: Supervised, signals: SignalChannel, logger: log.Logger,
            service: DeferredService | None, services: ServiceSet, probes: Probes | None,
            stopping: Callable[[], None] | None) -> int:
    """A critical service ended for good: the agent is stopped as by the stop signal, and
    the container's code is the service's (1 for a 0: it failed all the same)."""
    assert services.gave_up is not None
    tell(describe(agent, service, "stopping", services), service, probes)
    if stopping is not None:
        stopping()
    stop(agent, min(signals.stop_signals), signals, logger, service)  # (the one: settings')
    return services.gave_up[1]


def stop(agent: Supervised, sig: int, signals: SignalChannel, logger: log.Logger,
         service: DeferredService | None = None) -> int:
    """Step 7: the agent gets the stop signal, then --grace, then KILL; its code is ours.
    Every signal that comes meanwhile is passed on too (a second TERM included, which
    does not start the grace again): CMD decides what it means (invariant 9). A hook
    service not started yet starts at a connection meanwhile (the agent's last events)."""
    with log.phase(logger, "agent stop", signal=signal_name(sig)) as result:
        result["code"] = code = agent.stop(sig, signals, beside=service)
    return code
