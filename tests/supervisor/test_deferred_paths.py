"""The hook service starts when it is first needed (supervisor/deferred.py): at the first
connection on the control socket, or once the agent has run a while, whichever comes
first; a CMD that exits before either costs no service at all. Proved by what happened
(the supervisor's log, the answers the agent got, the socket's file), never by time.

Which of the two started a given service depends on the machine's speed (an agent's
first request may come after the delay on a loaded host): each test here holds whichever
it was, and says which path it is about."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.support.harness import Initd, wait_for

BIN = str(Path(sys.executable).parent)


def events(init: Initd) -> list[str]:
    """The supervisor's and the service's log events, in order (``--log-format json``)."""
    found = []
    for line in init.stderr.splitlines():
        try:
            found.append(json.loads(line).get("event", ""))
        except ValueError:
            continue  # a plain line (an exec failure, say)
    return found


def boot(initd, tmp_path: Path, *cmd: str, sid: str = "lazy") -> Initd:  # type: ignore[no-untyped-def]
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "OUT": str(tmp_path)}
    env = {k: v for k, v in env.items() if not k.startswith("INITD_")}
    return initd(["-v", "--log-format", "json", "--workspace", str(ws), "--session-id", sid,
                  "--hooks-dir", str(tmp_path / "no-image"), "--", *cmd], env=env)  # type: ignore[no-any-return]


def test_a_cmd_that_exits_at_once_costs_no_service(initd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`podman run IMAGE /bin/true` with a workspace: no service started, none stopped;
    the socket bound for it (before the agent started) is gone with initd."""
    init = boot(initd, tmp_path, "true")
    assert init.wait(30) == 0, init.stderr
    assert "hook service start" not in events(init), init.stderr
    assert not os.path.exists(init.socket)


def test_an_agent_that_never_asks_gets_its_service_all_the_same(initd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The delay path: nothing connects (the agent waits for a file the test makes only
    once the service has started), and the service starts unasked, once, then serves."""
    go = tmp_path / "go"
    init = boot(initd, tmp_path, "sh", "-c",
                f"while [ ! -e {go} ]; do sleep 0.02; done; initd health > \"$OUT/health\"")
    wait_for(lambda: "hook service start" in events(init), timeout=30,
             what="the hook service started unasked")
    go.touch()
    assert init.wait(60) == 0, init.stderr
    assert events(init).count("hook service start") == 1
    health = json.loads((tmp_path / "health").read_text())
    assert health["service"]["restarts"] == 0 and health["agent"]["state"] == "running"


def test_the_first_request_is_answered_by_the_service_it_starts(initd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The connection path: the agent's first act asks; its request waits in the
    socket's backlog while the service starts, and is answered, with the agent's state
    already known (the supervisor pushes it before the service serves): `initd ready`
    says ready, never "the agent has not been started yet"."""
    init = boot(initd, tmp_path, "sh", "-c",
                'initd ready > "$OUT/ready"; echo $? > "$OUT/code"')
    assert init.wait(60) == 0, init.stderr
    assert (tmp_path / "code").read_text().strip() == "0", (tmp_path / "ready").read_text()
    assert events(init).count("hook service start") == 1


@pytest.mark.slow
def test_a_request_made_while_the_agent_stops_is_answered(initd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The agent's last events: it asks nothing until told to stop, then asks from its
    TERM handler. Whether the service started by then (the delay) or starts at that
    request, the request is answered, and the service stopped after the agent."""
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import os, signal, subprocess, sys, time\n"
        "def last(*_):\n"
        "    out = subprocess.run([sys.executable, '-m', 'initd', 'health'],\n"
        "                         capture_output=True, text=True, timeout=60)\n"
        "    open(os.environ['OUT'] + '/last', 'w').write(str(out.returncode))\n"
        "    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, last)\n"
        "print('up', flush=True)\n"
        "while True:\n"
        "    time.sleep(1)\n")
    init = boot(initd, tmp_path, sys.executable, str(agent))
    init.expect("^up$", timeout=30)
    init.signal(signal.SIGTERM)
    assert init.wait(60) == 0, init.stderr
    assert (tmp_path / "last").read_text() == "0", init.stderr
    assert events(init).count("hook service start") == 1
    assert not os.path.exists(init.socket)
