"""Conformance: the order of starts and stops by dependency (SERVICES-SPEC.md, "after:",
"Start", "Stop"), and a dependency graph that cannot be run refused before anything runs.

References, as read (the snapshot's commit and date):

- s6-rc, doc/overview.html (github:skarnet/s6-rc 50f4e65, 2026-06-22;
  https://skarnet.org/software/s6-rc/overview.html): "never start A until it knows that B
  is up, and will make sure to never stop B until it knows that A is down"; a oneshot "is
  considered up when the up program has exited successfully".
- s6-rc, doc/s6-rc-compile.html (same snapshot;
  https://skarnet.org/software/s6-rc/s6-rc-compile.html): "when starting the set, s6-rc
  will start C first, then B, then A"; "If s6-rc-compile detects a cycle in dependencies
  across services, it will complain and exit 1".
- s6-rc, doc/s6-rc.html (same snapshot): "If a transition fails, s6-rc will not perform
  the transitions that depend on it".
- Compose spec, 05-services.md "depends_on" (github:compose-spec/compose-spec a076fad,
  2026-06-16): "service_completed_successfully: Specifies that a dependency is expected to
  run to successful completion before starting a dependent service"; "Compose removes
  services in dependency order ... web is removed before db and redis".
"""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

from tests.services.support import (
    Boot,
    count,
    events,
    standin,
    wait_event,
    wait_state,
    write_config,
)
from tests.support.harness import run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def first(lines: list[str], pattern: str) -> int:
    return next(i for i, line in enumerate(lines) if re.fullmatch(pattern, line))


def test_a_chain_starts_dependencies_first(boot: Boot, box: Path) -> None:
    """s6-rc-compile: A depends on B, B on C: "s6-rc will start C first, then B, then A".
    Each waits for a gate before it says it is ready (a TCP port of its own would do as
    well; the s6 line keeps it to one process)."""
    services = {
        name: {"command": standin(box, name, "--gate", str(box / f"go-{name}"), "--ready",
                                  "fd:3"),
               "ready": {"notify_fd": 3}, **({"after": [dep]} if dep else {})}
        for name, dep in (("a", "b"), ("b", "c"), ("c", None))}
    init = boot(services)
    downstream = {"c": ["b", "a"], "b": ["a"], "a": []}
    for name in ("c", "b", "a"):
        wait_event(box, rf"{name} start \d+")
        assert wait_state(init, name, "starting")
        assert [d for d in downstream[name] if count(box, rf"{d} start \d+")] == []
        (box / f"go-{name}").touch()
    assert wait_state(init, "a", "running")
    lines = events(box)
    assert first(lines, r"c ready") < first(lines, r"b start \d+") < \
        first(lines, r"b ready") < first(lines, r"a start \d+")


def test_a_oneshot_completes_before_its_dependents_start(boot: Boot, box: Path) -> None:
    """Compose's service_completed_successfully; s6-rc: a oneshot is up once "the up
    program has exited successfully". SERVICES-SPEC.md: "its dependents start after it
    exits 0", and its state is then ``done``."""
    services = {
        "migrate": {"type": "oneshot",
                    "command": standin(box, "migrate", "--gate", str(box / "go"), "--exit", "0")},
        "web": {"command": standin(box, "web"), "after": ["migrate"]},
    }
    init = boot(services)
    wait_event(box, r"migrate start \d+")
    assert wait_state(init, "web", "waiting")
    assert count(box, r"web start \d+") == 0
    (box / "go").touch()
    wait_event(box, r"web start \d+")
    lines = events(box)
    assert first(lines, "migrate exit 0") < first(lines, r"web start \d+")
    assert wait_state(init, "migrate", "done")
    assert count(box, r"migrate start \d+") == 1  # once: a oneshot is never restarted


def test_the_stop_goes_in_reverse_dependency_order(boot: Boot, box: Path) -> None:
    """s6-rc: "never stop B until it knows that A is down"; Compose: "web is removed
    before db and redis". SERVICES-SPEC.md: the agent first, then dependents before what
    they depend on, each with its own stop_signal. Every process lingers a moment between
    its signal and its end, so that signalling the next one early would show."""
    services = {
        "db": {"command": standin(box, "db", "--linger"), "stop_signal": "INT"},
        "api": {"command": standin(box, "api", "--linger"), "after": ["db"]},
        "web": {"command": standin(box, "web", "--linger"), "after": ["api"]},
    }
    init = boot(services, *standin(box, "agent", "--linger"))
    assert wait_state(init, "web", "running")
    init.signal(signal.SIGTERM)
    assert init.wait(90) == 0  # the agent's own exit code (it exits 0 on TERM)
    stops = [line for line in events(box) if " stop" in line]
    assert stops == ["agent stopping SIGTERM", "agent stopped",
                     "web stopping SIGTERM", "web stopped",
                     "api stopping SIGTERM", "api stopped",
                     "db stopping SIGINT", "db stopped"]


# --- a graph that cannot run: initd's own fatal error (125), before anything runs


ROOT = {"user": "root"}  # (no --user here: a service must name its user, root included)


@pytest.mark.parametrize(("services", "said"), [
    ({"a": {"after": ["b"]}, "b": {"after": ["a"]}}, ["services.", "after"]),
    ({"a": {"after": ["b"]}, "b": {"after": ["c"]}, "c": {"after": ["a"]}},
     ["services.", "after"]),
    ({"a": {"after": ["nowhere"]}}, ["services.a.after", "nowhere"]),
    ({"a": {"ready": {"prot": 80}}},
     ["initd.yaml: services.a.ready: expected one of port, http, exec, notify, notify_fd "
      "(got 'prot')"]),
    ({"agent": {}}, ["services.agent"]),
    ({"Web": {}}, ["services.Web"]),
], ids=["cycle-of-two", "cycle-of-three", "unknown-name", "unknown-readiness",
        "reserved-name", "name-out-of-pattern"])
def test_a_graph_that_cannot_run_is_refused_before_anything_runs(
        tmp_path: Path, services: dict[str, dict[str, object]], said: list[str]) -> None:
    """s6-rc-compile complains about a cycle and exits 1 (before any service is started:
    it is the compiler). SERVICES-SPEC.md: "a cycle or unknown name = error", names
    reserved, the name's pattern; initd exits 125 (its own fatal error, where s6-rc-compile
    exits 1) with a line that names the file, the service and the key."""
    marker = tmp_path / "ran"
    config = write_config(tmp_path, {
        name: {**ROOT, "command": f"echo {name} >> {marker}", **spec}
        for name, spec in services.items()})
    init = run(["--config", str(config), "--", "sh", "-c", f"echo agent >> {marker}"],
               cwd=str(tmp_path), timeout=60)
    assert init.code == 125, init.stderr
    assert all(piece in init.stderr for piece in said), init.stderr
    assert "initd.yaml" in init.stderr
    assert not marker.exists(), marker.read_text()


def test_a_service_without_a_user_is_refused_as_root_without_an_agent_user(
        tmp_path: Path) -> None:
    """SERVICES-SPEC.md: "with no agent user and initd running as root, a service with no
    `user` is an error (say `user: root` to mean it)" (supervisord runs a program as
    whoever it runs as; the spec is stricter)."""
    marker = tmp_path / "ran"
    config = write_config(tmp_path, {"web": {"command": f"echo web >> {marker}"}})
    init = run(["--config", str(config), "--", "sh", "-c", f"echo agent >> {marker}"],
               cwd=str(tmp_path), timeout=60)
    assert init.code == 125 and "services.web" in init.stderr and "user" in init.stderr
    assert not marker.exists()
