"""supervisor/loop.py, run as initd runs it (PID 1 of a PID namespace): the image's
services beside the agent, in the supervisor's one loop. A service killed is restarted
and the agent never notices; a critical service that ends for good stops the agent and
its code is the container's; at the stop signal the agent goes first, then the services,
dependents before what they need; /healthz shows every service's state."""

from __future__ import annotations

import json
import os
import signal
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.harness import free_port, wait_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="services run as root here")
AGENT = ["--", "sh", "-c", "trap 'echo agent stopped; exit 0' TERM; echo agent up; "
         "while :; do sleep 0.05; done"]


def config(tmp_path: Path, declared: dict[str, Any]) -> str:
    for spec in declared.values():
        spec.setdefault("user", "root")
    path = tmp_path / "initd.yaml"
    path.write_text(yaml.safe_dump({"services": declared,
                                   "services_log_dir": str(tmp_path / "logs")},
                                  sort_keys=False))
    return str(path)


def healthz(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as answer:
        return json.loads(answer.read())  # type: ignore[no-any-return]


def states(port: int) -> dict[str, str]:
    return {name: s["state"] for name, s in (healthz(port).get("services") or {}).items()}


def test_a_killed_service_is_restarted_and_the_agent_never_notices(initd, tmp_path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    init = initd(["--config", config(tmp_path, {"web": {"command": "exec sleep 1000"}}),
                  "--health-port", str(port), "--no-service", *AGENT])
    init.expect("agent up")
    wait_for(lambda: states(port) == {"web": "running"}, 60, "web running")
    first = healthz(port)["services"]["web"]["pid"]
    os.kill(host_pid(init, first), signal.SIGKILL)
    wait_for(lambda: healthz(port)["services"]["web"]["restarts"] == 1
             and states(port) == {"web": "running"}, 60, "web restarted")
    assert healthz(port)["agent"]["restarts"] == 0
    init.signal(signal.SIGTERM)
    assert init.wait(60) == 0 and "agent stopped" in init.stdout_lines


def host_pid(init: Any, ns_pid: int) -> int:
    """The host's pid of the namespace's ``ns_pid``: NSpid's first field is the host's."""
    for proc in init.descendants():
        with open(f"/proc/{proc.pid}/status") as f:
            fields = next(line for line in f if line.startswith("NSpid:")).split()[1:]
        if fields[-1] == str(ns_pid):
            return proc.pid
    raise AssertionError(f"no process {ns_pid} in the namespace")


def test_a_critical_service_that_fails_stops_the_container_with_its_code(  # type: ignore[no-untyped-def]
        initd, tmp_path) -> None:
    init = initd(["--config", config(tmp_path, {
        "migrate": {"command": "sleep 0.5; exit 3", "type": "oneshot", "critical": True}}),
        "--no-service", *AGENT])
    assert init.wait(60) == 3, init.stderr
    assert "agent stopped" in init.stdout_lines
    assert "a critical service ended for good" in init.stderr


def test_the_stop_takes_the_agent_then_dependents_then_what_they_need(  # type: ignore[no-untyped-def]
        initd, tmp_path) -> None:
    order = tmp_path / "order"
    body = ("trap 'echo {0} >> " + str(order) + "; exit 0' TERM; touch " + str(tmp_path)
            + "/{0}; while :; do sleep 0.05; done")
    agent = ["--", "sh", "-c", f"trap 'echo agent >> {order}; exit 7' TERM; echo agent up; "
             "while :; do sleep 0.05; done"]
    port = free_port()
    init = initd(["--config", config(tmp_path, {
        name: {"command": body.format(name), "ready": {"exec": f"test -e {tmp_path}/{name}"},
               **({"after": after} if after else {})}
        for name, after in (("db", []), ("cache", []), ("web", ["db", "cache"]),
                            ("worker", ["web"]))}),
        "--health-port", str(port), "--no-service", *agent])
    init.expect("agent up")
    wait_for(lambda: set(states(port).values()) == {"running"}, 60, "all running")
    init.signal(signal.SIGTERM)
    assert init.wait(60) == 7
    stopped = order.read_text().split()
    assert stopped[:3] == ["agent", "worker", "web"] and sorted(stopped[3:]) == ["cache", "db"]


def test_a_services_output_goes_to_its_log_and_to_initds(initd, tmp_path) -> None:  # type: ignore[no-untyped-def]
    init = initd(["--config", config(tmp_path, {
        "web": {"command": "echo hello from web; echo oops >&2; exec sleep 1000"}}),
        "--no-service", "--log-format", "json", *AGENT])
    init.expect("agent up")
    current = tmp_path / "logs" / "web" / "current"
    wait_for(lambda: current.exists() and "oops" in current.read_text(), 60, "its log")
    assert current.read_text() == "hello from web\noops\n"
    wait_for(lambda: "oops" in init.stderr, 60, "initd's log")
    lines = [json.loads(line) for line in init.stderr.splitlines() if "from web" in line]
    assert [(line["event"], line["service"]) for line in lines] == [("hello from web", "web")]
    init.signal(signal.SIGTERM)
    assert init.wait(60) == 0


def test_metrics_show_every_service(initd, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from prometheus_client.parser import text_string_to_metric_families

    port = free_port()
    init = initd(["--config", config(tmp_path, {"web": {"command": "exec sleep 1000"},
                                                "once": {"command": "true",
                                                         "type": "oneshot"}}),
                  "--health-port", str(port), "--no-service", *AGENT])
    init.expect("agent up")
    wait_for(lambda: states(port) == {"web": "running", "once": "done"}, 60, "both")

    def up() -> dict[str, float]:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as got:
            text = got.read().decode()
        return {s.labels["service"]: s.value for family in text_string_to_metric_families(text)
                if family.name == "initd_service_up" for s in family.samples}
    wait_for(lambda: up() == {"agent": 1.0, "web": 1.0, "once": 0.0}, 60, "/metrics")
    init.signal(signal.SIGTERM)
    assert init.wait(60) == 0
