"""``/metrics`` on the probe port (health.py), in the Prometheus text exposition format,
written by the field library (prometheus_client: its names, its escaping of label
values), imported at the first scrape: never in PID 1, never without --health-port.

What it says, each from what root already holds:
- each service (the agent, the hook service, and every other the supervisor describes,
  by the name the state gives it): up (ready: state "running"), restarts, its last exit
  code; and its process's CPU seconds and resident memory, from /proc (process/procfs.py);
- what PID 1 reaped that was not the supervisor (pid1/reaped.py's shared page);
- what the hook service counted (state/hookcounts.py): the agent's word, checked and
  bounded before it comes here, and said to be the service's in each family's help.

A scrape costs a render at most once every FRESH seconds, whoever asks and however
often (the probe port is open to the pod's network, the agent included): between two
renders every scrape gets the last body as it was made. A render is the state's few
series and two small /proc reads per service, under a lock: one render at a time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from initd.pid1.reaped import Reaped
from initd.process import procfs
from initd.state.hookcounts import BUCKETS, Counts, empty

FRESH = 1.0  # seconds a body is served before the next scrape makes another
SERVICE_NAMES = {"agent": "agent", "service": "hook-service"}  # the state's keys: names
HOOKS = "as the hook service (the agent's process) reports it"


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self, reaps: Reaped | None, fresh: float = FRESH) -> None:
        self.reaps = reaps  # None: PID 1 made no page (its glance saw no probe port)
        self.fresh = fresh
        self._state: dict[str, Any] = {}
        self._hooks: Counts | None = None
        self._lock = threading.Lock()
        self._body = b""
        self._made = -fresh
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)  # (its collect, below)

    def update(self, state: dict[str, Any], hooks: Counts | None) -> None:
        """What the supervisor now knows (replaced whole): the next scrape renders it."""
        if state is not self._state or hooks is not self._hooks:
            self._state, self._hooks = state, hooks
            self._made = -self.fresh

    def body(self) -> bytes:
        with self._lock:
            now = time.monotonic()
            if now - self._made >= self.fresh:
                self._body = generate_latest(self.registry)
                self._made = now
            return self._body

    def collect(self) -> Iterator[Metric]:
        """The registry's collector: every family, from one snapshot."""
        services = services_of(self._state)
        yield from service_families(services)
        yield from child_families(services)
        if self.reaps is not None:
            reaped = CounterMetricFamily(
                "initd_zombies_reaped", "Processes PID 1 reaped (orphans and the "
                "supervisor's leftovers; not the supervisor itself).")
            reaped.add_metric([], self.reaps.read())
            yield reaped
        yield from hook_families(self._hooks or empty())


def services_of(state: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """name -> its description: the agent, the hook service, and a mapping of further
    services under ``services`` when the state has one (each as describe() makes it)."""
    found = {name: state[key] for key, name in SERVICE_NAMES.items()
             if isinstance(state.get(key), Mapping)}
    more = state.get("services")
    if isinstance(more, Mapping):
        found.update({str(name): one for name, one in more.items()
                      if isinstance(one, Mapping)})
    return found


def service_families(services: Mapping[str, Mapping[str, Any]]) -> Iterator[Metric]:
    up = GaugeMetricFamily("initd_service_up", "1 while the service is running (ready, "
                           "when it has a readiness check), else 0.", labels=["service"])
    restarts = CounterMetricFamily("initd_service_restarts", "Times initd restarted the "
                                   "service.", labels=["service"])
    code = GaugeMetricFamily("initd_service_last_exit_code", "The service's last exit "
                             "code (128+N when signal N ended it); none before its first "
                             "exit.", labels=["service"])
    for name, one in services.items():
        up.add_metric([name], 1 if one.get("state") == "running" else 0)
        if _whole(one.get("restarts")):
            restarts.add_metric([name], one["restarts"])
        if _whole(one.get("lastExitCode")):
            code.add_metric([name], one["lastExitCode"])
    return iter((up, restarts, code))


def child_families(services: Mapping[str, Mapping[str, Any]]) -> Iterator[Metric]:
    cpu = CounterMetricFamily("initd_child_cpu_seconds", "CPU time (user and system) of "
                              "the service's process since it started (its own, not its "
                              "children's); starts again at its restart.", labels=["child"])
    rss = GaugeMetricFamily("initd_child_resident_memory_bytes", "Resident memory of the "
                            "service's process.", labels=["child"])
    for name, one in services.items():
        pid = one.get("pid")
        used = procfs.usage(pid) if isinstance(pid, int) and pid > 0 else None
        if used is not None:
            cpu.add_metric([name], used[0])
            rss.add_metric([name], used[1])
    return iter((cpu, rss))


def hook_families(counts: Counts) -> Iterator[Metric]:
    run = CounterMetricFamily("initd_hooks_run", f"Hooks run, by format and event, {HOOKS}.",
                              labels=["format", "event"])
    durations = HistogramMetricFamily("initd_hook_duration_seconds", f"How long hooks ran, "
                                      f"{HOOKS}.", labels=["format", "event"])
    for (fmt, event), (buckets, total) in sorted(counts.durations.items()):
        cumulative, so_far = [], 0
        for bound, n in zip((*map(str, BUCKETS), "+Inf"), buckets, strict=True):
            so_far += n
            cumulative.append((bound, so_far))
        run.add_metric([fmt, event], so_far)
        durations.add_metric([fmt, event], cumulative, total)
    decisions = CounterMetricFamily("initd_decisions", f"Hooks' decisions (block, approve, "
                                    f"none), by format, {HOOKS}.", labels=["format", "decision"])
    for key, n in sorted(counts.decisions.items()):
        decisions.add_metric(list(key), n)
    yield from (run, durations, decisions)
    for name, value, what in (
            ("initd_hooks_failed", counts.failed, "Hooks that failed (timed out included)"),
            ("initd_hooks_timed_out", counts.timed_out, "Hooks that timed out"),
            ("initd_events_journaled", counts.journaled, "Events whose every step was "
             "journaled (sent again, they run no hook twice)"),
            ("initd_events_replayed", counts.replayed, "Events answered again from their "
             "journal")):
        family = CounterMetricFamily(name, f"{what}, {HOOKS}.")
        family.add_metric([], value)
        yield family


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
