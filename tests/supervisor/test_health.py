"""/healthz and /readyz on --health-port: served by the supervisor, from what it knows,
as a kubelet's httpGet sees them: through boot, readiness, and the stop's grace."""

from __future__ import annotations

import json
import signal
import socket
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.hooks.support import add_hook
from tests.support.harness import free_port, wait_for


def get(port: int, path: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())
    except OSError:
        return 0, {}


AGENT = """
import os, signal, socket, sys, time
signal.signal(signal.SIGTERM, lambda *a: (time.sleep(1.5), sys.exit(0)))  # a slow stop
while not os.path.exists(sys.argv[2]):
    time.sleep(0.02)
server = socket.create_server(("127.0.0.1", int(sys.argv[1])))
while True:
    server.accept()[0].close()
"""


@pytest.mark.slow
def test_probes_follow_boot_readiness_and_the_stop(initd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    probe, ready_port = free_port(), free_port()
    ws = tmp_path / "ws"
    add_hook(ws / ".discobot" / "hooks", "10-wait.sh",
             f"while [ ! -e {tmp_path}/boot-go ]; do sleep 0.02; done", type="session")
    init = initd(["--workspace", str(ws), "--no-service", "--health-port", str(probe),
                  "--ready-port", str(ready_port), "--", sys.executable, "-c", AGENT,
                  str(ready_port), str(tmp_path / "agent-go")])
    # during a blocking session hook: alive, not ready
    wait_for(lambda: get(probe, "/healthz")[0] == 200, what="/healthz")
    assert get(probe, "/readyz") == (503, {"ready": False, "agent": None,
                                           "reason": "the agent has not been started yet"})
    (tmp_path / "boot-go").touch()
    wait_for(lambda: (get(probe, "/healthz")[1].get("agent") or {}).get("state")
             == "starting", what="the agent started")
    code, body = get(probe, "/readyz")
    assert code == 503 and body["reason"] == f"the agent is starting (ready once port " \
                                             f"{ready_port} answers)"
    (tmp_path / "agent-go").touch()
    wait_for(lambda: get(probe, "/readyz")[0] == 200, what="ready")
    assert get(probe, "/nosuch")[0] == 404
    # the stop: not ready from the stop signal on, while the agent takes its time
    init.signal(signal.SIGTERM)
    wait_for(lambda: get(probe, "/readyz")[1].get("reason") == "initd is stopping",
             what="not ready while stopping")
    assert init.wait(30) == 0, init.stderr


def test_a_port_that_cannot_be_had_is_initds_error(initd) -> None:  # type: ignore[no-untyped-def]
    with socket.create_server(("", 0)) as taken:
        port = taken.getsockname()[1]
        init = initd(["--no-service", "--health-port", str(port), "--", "true"])
        assert init.wait(30) == 125
    assert f"cannot serve probes on port {port}" in init.stderr
