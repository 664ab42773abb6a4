"""/metrics on --health-port (supervisor/metrics.py), from outside: the real initd as PID
1 of a PID namespace, scraped over HTTP, each answer read by prometheus_client's own
parser and held to the format's and the naming conventions' rules, as promtool's lint
would: a HELP and a TYPE for every family, no family twice, counters ending in _total,
base units named, nothing but snake_case.

The rules, as read on 2026-11-28:
- the text exposition format, https://prometheus.io/docs/instrumenting/exposition_formats/
  (line-oriented; HELP and TYPE lines; counter, gauge, histogram; a histogram's
  ``_bucket`` series with ``le``, ``+Inf`` among them, ``_sum`` and ``_count``);
- metric and label naming, https://prometheus.io/docs/practices/naming/ (an application
  prefix; one unit, a base unit, named as a plural suffix; ``_total`` for an accumulating
  count, after the unit; snake_case).
"""

from __future__ import annotations

import os
import re
import signal
import sys
import urllib.request
from pathlib import Path

import psutil
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from initd.supervisor import metrics
from tests.support import imports
from tests.support.harness import Initd, free_port, wait_for
from tests.support.probes import boot_with_probes

NAME = re.compile(r"initd_[a-z0-9]+(_[a-z0-9]+)*")  # the prefix, snake_case
NOT_BASE_UNITS = ("milliseconds", "_ms", "microseconds", "kilobytes", "megabytes", "_kb",
                  "_mb", "percent", "minutes", "hours")
RESERVED = ("_total", "_count", "_sum", "_bucket", "_created")  # (a gauge's name: none)


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        assert answer.status == 200
        assert answer.headers["Content-Type"].startswith("text/plain; version=")
        return str(answer.read().decode())


def checked(text: str) -> dict[str, list[Sample]]:
    """The families' samples by name, once the text passed the format's and the naming
    conventions' rules (the module's docstring)."""
    assert text.endswith("\n")
    helps = re.findall(r"^# HELP (\S+) \S", text, re.M)
    types = re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M)
    assert len(helps) == len(set(helps)) and [n for n, _ in types] == helps  # HELP, TYPE
    found: dict[str, list[Sample]] = {}
    for family in text_string_to_metric_families(text):
        assert family.name not in found, f"{family.name} twice"
        assert family.documentation and family.type in ("counter", "gauge", "histogram")
        assert NAME.fullmatch(family.name), family.name
        assert not any(bad in family.name for bad in NOT_BASE_UNITS), family.name
        if family.type == "gauge":
            assert not family.name.endswith(RESERVED), family.name
        for sample in family.samples:
            assert all(re.fullmatch(r"[a-z_]+", label) for label in sample.labels)
            if family.type == "counter":
                assert sample.name == f"{family.name}_total", sample.name
        if family.type == "histogram":
            histogram_is_whole(family.samples)
        found[family.name] = family.samples
    for name, kind in types:  # (the parser strips a counter's _total from its family)
        assert (name.removesuffix("_total") if kind == "counter" else name) in found
    return found


def histogram_is_whole(samples: list[Sample]) -> None:
    by_series: dict[tuple[tuple[str, str], ...], list[Sample]] = {}
    for sample in samples:
        key = tuple(sorted((k, v) for k, v in sample.labels.items() if k != "le"))
        by_series.setdefault(key, []).append(sample)
    for series in by_series.values():
        buckets = [s for s in series if s.name.endswith("_bucket")]
        assert buckets[-1].labels["le"] == "+Inf"
        assert [s.value for s in buckets] == sorted(s.value for s in buckets)  # cumulative
        count = next(s.value for s in series if s.name.endswith("_count"))
        assert buckets[-1].value == count and any(s.name.endswith("_sum") for s in series)


def value(found: dict[str, list[Sample]], family: str, **labels: str) -> float | None:
    return next((s.value for s in found.get(family, ()) if s.labels == labels
                 and not s.name.endswith("_created")), None)


# The agent: orphans N grandchildren (double forks: PID 1 reaps them), then, once ready
# (its port answers), sleeps. Its second start waits for the file "go" before it listens.
AGENT = """
import os, socket, sys, time
port, orphans, where = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for _ in range(orphans):
    if os.fork() == 0:
        if os.fork() == 0:
            os._exit(0)
        os._exit(0)
    os.wait()
again = os.path.exists(where + "/started")
open(where + "/started", "w").close()
while again and not os.path.exists(where + "/go"):
    time.sleep(0.02)
server = socket.create_server(("127.0.0.1", port))
print("listening", flush=True)
while True:
    server.accept()[0].close()
"""
ORPHANS = 25


@pytest.mark.slow
def test_metrics_follow_the_agent_its_restart_and_what_pid1_reaped(
        initd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ready = free_port()
    init, port = boot_with_probes(lambda probe: initd([  # type: ignore[no-any-return]
        "--no-service", "--health-port", str(probe), "--ready-port", str(ready),
        "--restart", "on-failure", "--", sys.executable, "-c", AGENT, str(ready),
        str(ORPHANS), str(tmp_path)]))
    found = wait_for(lambda: (m := checked(scrape(port))) and value(
        m, "initd_service_up", service="agent") == 1 and m, timeout=60, what="the agent up")
    assert isinstance(found, dict)
    assert value(found, "initd_service_restarts", service="agent") == 0
    assert value(found, "initd_service_last_exit_code", service="agent") is None
    assert value(found, "initd_zombies_reaped", ) >= ORPHANS  # type: ignore[operator]
    assert 0 < value(found, "initd_child_resident_memory_bytes", child="agent") < 2**31  # type: ignore[operator]
    assert value(found, "initd_child_cpu_seconds", child="agent") >= 0  # type: ignore[operator]
    assert value(found, "initd_hooks_failed") == 0  # (no hook service: nothing counted)

    agent = agent_process(init)
    agent.send_signal(signal.SIGKILL)
    again = wait_for(lambda: (m := checked(scrape(port))) and value(
        m, "initd_service_restarts", service="agent") == 1 and m, timeout=60,
        what="the restart counted")
    assert isinstance(again, dict)
    assert value(again, "initd_service_last_exit_code", service="agent") == 128 + 9
    assert value(again, "initd_service_up", service="agent") == 0  # waits for "go"
    (tmp_path / "go").touch()
    wait_for(lambda: value(checked(scrape(port)), "initd_service_up", service="agent") == 1,
             timeout=60, what="up again")
    assert value(checked(scrape(port)), "initd_zombies_reaped") >= 2 * ORPHANS  # type: ignore[operator]
    init.signal(signal.SIGTERM)
    assert init.wait(30) in (0, 128 + 15), init.stderr


def agent_process(init: Initd) -> psutil.Process:
    def found() -> psutil.Process | None:
        return next((p for p in init.descendants() if p.cmdline()[1:3] == ["-c", AGENT]),
                    None)  # (initd's own command line holds the script too)
    process = wait_for(found, timeout=30, what="the agent's process")
    assert isinstance(process, psutil.Process)
    return process


NYZHI = """
[[agent.hooks]]
event = "pre_tool"
tool_name = "git_commit"
command = "echo 'tests fail' >&2; exit 2"
block = true
"""
EMIT = ("import subprocess, sys; [subprocess.run([sys.executable, '-m', 'initd', 'emit', "
        "'pre_tool', '--data', '{\"tool_name\": \"git_commit\"}'], capture_output=True) "
        "for _ in range(3)]; print('emitted', flush=True); import time; time.sleep(1000)")


@pytest.mark.slow
def test_what_the_hook_service_counted_and_its_restart(initd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = tmp_path / "ws"
    (ws / ".nyzhi").mkdir(parents=True)
    (ws / ".nyzhi" / "config.toml").write_text(NYZHI)
    init, port = boot_with_probes(lambda probe: initd([  # type: ignore[no-any-return]
        "--workspace", str(ws), "--state-dir", str(tmp_path / "state"), "--hooks-dir",
        str(tmp_path / "none"), "--session-id", "metrics", "--health-port", str(probe),
        "--", sys.executable, "-c", EMIT], cwd=str(ws)))
    init.expect("^emitted$", timeout=60)
    found = wait_for(lambda: (m := checked(scrape(port))) and value(
        m, "initd_hooks_run", format="nyzhi", event="pre_tool") == 3 and m, timeout=30,
        what="three hooks counted")
    assert isinstance(found, dict)
    assert value(found, "initd_decisions", format="nyzhi", decision="block") == 3
    assert value(found, "initd_events_journaled") == 3  # (emit sends a key)
    assert value(found, "initd_service_up", service="hook-service") == 1
    assert value(found, "initd_child_resident_memory_bytes", child="hook-service") > 0  # type: ignore[operator]
    service = next(p for p in init.descendants() if "service" in p.cmdline()[:6])
    service.send_signal(signal.SIGKILL)
    after = wait_for(lambda: (m := checked(scrape(port))) and value(
        m, "initd_service_restarts", service="hook-service") == 1 and m, timeout=60,
        what="the service's restart")
    assert isinstance(after, dict)  # its counts are root's, and go on
    assert value(after, "initd_hooks_run", format="nyzhi", event="pre_tool") == 3
    init.signal(signal.SIGTERM)
    init.wait(30)


# --- what is imported where: the field library only with the probe port, at a scrape


SCRAPER = ("import sys, urllib.request; urllib.request.urlopen("
           "f'http://127.0.0.1:{sys.argv[1]}/metrics', timeout=30).read()")


def test_a_plain_start_imports_neither_the_library_nor_mmap(tmp_path: Path) -> None:
    got = imports.imported("--", "true", cwd=tmp_path)
    assert "initd.supervisor.boot" in got
    assert not {"prometheus_client", "mmap", "initd.supervisor.metrics"} & got


def test_the_probe_port_alone_loads_no_library_until_a_scrape(tmp_path: Path) -> None:
    quiet = imports.imported("--no-service", "--health-port", str(free_port()), "--", "true",
                             cwd=tmp_path)
    assert "initd.supervisor.health" in quiet and "mmap" in quiet  # (PID 1's page)
    assert not {"prometheus_client", "initd.supervisor.metrics"} & quiet
    port = free_port()
    scraped = imports.imported("--no-service", "--health-port", str(port), "--",
                               sys.executable, "-c", SCRAPER, str(port), cwd=tmp_path)
    assert {"prometheus_client", "initd.supervisor.metrics"} <= scraped


# --- the collector alone: what a state it is given comes to


def test_every_service_the_state_describes_is_rendered(tmp_path: Path) -> None:
    me = os.getpid()
    state = {"agent": {"state": "running", "pid": me, "restarts": 2, "lastExitCode": 1},
             "service": None,
             "services": {"web": {"state": "backoff", "pid": None, "restarts": 7,
                                  "lastExitCode": 137},
                          "db": {"state": "running", "pid": 2**22 + 1, "restarts": 0,
                                 "lastExitCode": None}, "bad": "not a mapping"}}
    made = metrics.Metrics(None)
    made.update(state, None)
    found = checked(made.body().decode())
    assert {s.labels["service"] for s in found["initd_service_up"]} == {"agent", "web", "db"}
    assert value(found, "initd_service_up", service="web") == 0
    assert value(found, "initd_service_restarts", service="web") == 7
    assert value(found, "initd_service_last_exit_code", service="web") == 137
    assert value(found, "initd_child_resident_memory_bytes", child="agent") > 0  # type: ignore[operator]
    assert value(found, "initd_child_cpu_seconds", child="db") is None  # (no such pid)
    assert "initd_zombies_reaped" not in found  # no page from PID 1: not said


def test_a_body_is_made_at_most_once_a_fresh_period_unless_the_state_changed() -> None:
    made = metrics.Metrics(None, fresh=3600)
    state = {"agent": {"state": "running", "pid": None, "restarts": 0}}
    made.update(state, None)
    first = made.body()
    made.update(state, None)  # the same state: the same body
    assert made.body() is first
    made.update({"agent": {"state": "exited", "pid": None, "restarts": 0}}, None)
    assert made.body() != first
