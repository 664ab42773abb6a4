"""The demo image's two services (images/demo/initd.yaml: web, ready by sd_notify after
a warm-up; worker, after it) in a real container, as podman runs it: plain, hardened
(the listed capabilities, a read-only root) and as a uid of no passwd entry. The
services run as the agent, their logs are theirs, the agent restarts its own, and a
stop takes the services with the agent, within the grace."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support import podman as support
from tests.support.podman import missing, podman, skip_reason

pytestmark = pytest.mark.xdist_group("podman")  # (one worker runs podman: test_adoption)

IMAGE = "localhost/initd-demo:dev"
API = ["/opt/demo/agent-api.py"]
CAPABILITIES = "CHOWN,DAC_OVERRIDE,FOWNER,KILL,SETUID,SETGID"  # docs/security.md's six


@pytest.fixture(scope="module", autouse=True)
def images() -> None:
    why = missing(IMAGE)
    if why:
        pytest.skip(skip_reason(why))


@pytest.fixture
def run() -> Iterator[Any]:
    made: list[support.Container] = []

    def start(*args: str) -> support.Container:
        container = support.Container(IMAGE, *args, cmd=API)
        made.append(container)
        return container

    yield start
    for container in made:
        container.remove()


def services(c: support.Container, user: str | None = None) -> dict[str, Any]:
    out = c.exec("initd", "services", "--json", user=user)
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout)["services"]  # type: ignore[no-any-return]


def both_running(c: support.Container) -> bool:
    """(False while initd still boots: no hook service answers yet)"""
    out = c.exec("initd", "services", "--json")
    return out.returncode == 0 and {n: s["state"] for n, s in json.loads(
        out.stdout)["services"].items()} == {"web": "running", "worker": "running"}


@pytest.mark.parametrize("flags", [
    (), ("--cap-drop", "all", "--cap-add", CAPABILITIES, "--read-only"),
    ("--user", "1000680000:0")], ids=["plain", "hardened", "random-uid"])
def test_web_then_worker_as_the_agent_and_a_restart_of_its_own(run, flags) -> None:  # type: ignore[no-untyped-def]
    c = run(*flags)
    c.until(lambda: both_running(c), timeout=90, what="web and worker running")
    found = services(c)
    uid = "1000680000" if "--user" in flags else "1000"
    for name in ("web", "worker"):
        status = c.exec("cat", f"/proc/{found[name]['pid']}/status").stdout
        assert f"Uid:\t{uid}\t" in status, status
    assert found["web"]["readyBy"] == "NOTIFY_SOCKET"
    assert found["web"]["status"].startswith("serving on port")
    c.until(lambda: "web answered" in c.logs(), timeout=60, what="worker's line")
    restarted = c.exec("initd", "services", "restart", "web", user=None if "--user" in flags
                       else "agent")
    assert restarted.returncode == 0 and "restarting" in restarted.stdout
    c.until(lambda: services(c)["web"]["restarts"] == 1 and both_running(c), timeout=60,
            what="web back")
    assert podman("stop", "-t", "20", c.name, timeout=60).returncode == 0
    assert c.exit_code() == 143
    assert "Traceback" not in c.logs()


def test_the_logs_are_the_services_users(run) -> None:  # type: ignore[no-untyped-def]
    c = run()
    c.until(lambda: both_running(c), timeout=90, what="web and worker running")
    c.until(lambda: "ready" in c.exec("cat", "/var/log/initd/web/current").stdout,
            timeout=60, what="web's log")
    owners = c.exec("stat", "-c", "%U %a", "/var/log/initd", "/var/log/initd/web",
                    "/var/log/initd/web/current").stdout.split("\n")
    assert owners[:3] == ["root 755", "agent 750", "agent 640"], owners
    health = json.loads(c.exec("initd", "health").stdout)
    assert health["status"] == "ok" and set(health["services"]) == {"web", "worker"}
