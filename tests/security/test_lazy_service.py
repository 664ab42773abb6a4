"""Attacks on the window the hook service's lazy start opens (supervisor/deferred.py):
the agent runs before any service does, and root starts it at the first connection on
the control socket, or once the agent has run a while.

- The agent acts first, by either path: it changes or removes its guard's file, then
  waits for the service the delay starts (never connecting before it), or floods the
  socket before anything serves it. What answers is still the guard of the session's
  start (invariant 15), never a pass because no service was up (invariant 12).
- Flooding the socket (connections closed at once, connections held silent, requests)
  starts one service, never a second: root only polls the listening socket, it never
  accepts or reads it, and nothing the agent sends there makes root start anything more
  (invariant 16). Every request made before the service served is answered.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.support.attack import Agent, Canary, agent_script, as_agent

GUARD = 'echo GUARD-RAN; echo "the guard says no" >&2; exit 2'
RM = json.dumps({"tool_name": "Bash", "tool_input": {"command": "rm -rf /data"}})
SETTINGS = json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": GUARD}]}]}})

FLOOD = """
    import json, os, socket, subprocess, sys, threading, time
    path, data = os.environ["INITD_SOCKET"], sys.argv[1]
    held, answers = [], []

    def connect():
        while True:  # a full backlog: EAGAIN, tried again (as initd's own client does)
            conn = socket.socket(socket.AF_UNIX)
            conn.settimeout(120)
            try:
                conn.connect(path)
                return conn
            except BlockingIOError:
                conn.close()
                time.sleep(0.01)

    def churn():  # connected and closed at once, as fast as it can
        for _ in range(100):
            connect().close()

    def hold():  # connected, and never a byte sent
        for _ in range(30):
            held.append(connect())

    def ask():
        conn = connect()
        conn.sendall(b"GET /v1/health HTTP/1.0\\r\\n\\r\\n")
        answers.append(b"".join(iter(lambda: conn.recv(65536), b"")).split(b" ", 2)[1])
        conn.close()

    # the agent's first act: all of it at once, before anything serves the socket
    threads = [threading.Thread(target=work) for work in [churn] * 3 + [hold] + [ask] * 40]
    for thread in threads:
        thread.start()
    emit = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data", "-"],
                          input=open(data).read(), capture_output=True, text=True,
                          timeout=120)
    for thread in threads:
        thread.join()
    for conn in held:
        conn.close()
    print(json.dumps({"answers": [a.decode() for a in answers], "emit": emit.returncode,
                      "stdout": emit.stdout[-3000:], "stderr": emit.stderr[-2000:]}),
          flush=True)
"""

# The delay's path: the guard's file removed first, then nothing until a service of the
# agent's uid is there (started unasked: the agent never connected), then the question.
AFTER_THE_DELAY = """
    import json, subprocess, sys, time
    settings, data = sys.argv[1], sys.argv[2]
    subprocess.run(["rm", "-f", settings], check=True)  # the first instruction
    deadline = time.monotonic() + 60
    while subprocess.run(["pgrep", "-u", str(__import__("os").getuid()), "-f",
                          "initd servic[e]"], capture_output=True).returncode:
        if time.monotonic() > deadline:
            sys.exit("no hook service started unasked")
        time.sleep(0.02)
    emit = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data", "-"],
                          input=open(data).read(), capture_output=True, text=True,
                          timeout=120)
    print(json.dumps({"emit": emit.returncode, "stdout": emit.stdout[-3000:],
                      "stderr": emit.stderr[-2000:]}), flush=True)
"""


def events(stderr: str) -> list[str]:
    found = []
    for line in stderr.splitlines():
        try:
            found.append(json.loads(line).get("event", ""))
        except ValueError:
            continue
    return found


def guard(agent: Agent, ws: Path) -> Path:
    """Claude Code's project settings with a blocking PreToolUse guard, the agent's own
    file, there before initd starts."""
    path = ws / ".claude" / "settings.json"
    as_agent(agent, f"mkdir -p '{path.parent}'")
    path.write_text(SETTINGS)
    os.chown(path, agent.uid, agent.gid)
    return path


def payload() -> str:
    data = Path(agent_script("")).parent / "payload.json"
    data.write_text(RM)
    data.chmod(0o644)
    return str(data)


def guarded(fired: dict[str, object]) -> bool:
    """Blocked by the guard of the start, which ran."""
    return fired["emit"] == 2 and "GUARD-RAN" in str(fired["stdout"])


@pytest.mark.slow
def test_a_flood_before_any_service_starts_one_and_loses_no_request(
        boot, agent: Agent, ws: Path) -> None:
    guard(agent, ws)
    init = boot(sys.executable, agent_script(FLOOD), payload())
    assert init.wait(timeout=180) == 0, init.stderr[-3000:]
    fired = json.loads(init.stdout_lines[-1])
    assert fired["answers"] == ["200"] * 40, fired
    assert guarded(fired), fired
    assert events(init.stderr).count("hook service start") == 1, init.stderr[-3000:]
    assert "restarting after backoff" not in events(init.stderr)


@pytest.mark.slow
def test_a_guard_removed_before_the_delay_starts_the_service_still_guards(
        boot, agent: Agent, ws: Path) -> None:
    settings = guard(agent, ws)
    init = boot(sys.executable, agent_script(AFTER_THE_DELAY), str(settings), payload())
    assert init.wait(timeout=180) == 0, init.stderr[-3000:]
    fired = json.loads(init.stdout_lines[-1])
    assert not settings.exists()  # (the agent did remove it, before the service started)
    assert guarded(fired), fired
    assert events(init.stderr).count("hook service start") == 1


# (where in the agent's ~/.discobot, what it points at): root makes the session's state
# there when the service starts, which is now when the agent asks; the agent plants first
PLANTS = {"the whole tree": ("", "sub"), "the session": ("{sid}", "sub"),
          "its hooks": ("{sid}/hooks", "sub"), "the probe file": ("{sid}/hooks/.initd-probe",
                                                                 "secret"),
          "the sessions' records": ("sessions", "sub")}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PLANTS))
def test_links_the_agent_plants_before_asking_give_it_nothing(
        boot, agent: Agent, ws: Path, sid: str, canary: Canary, name: str) -> None:
    """No hook runs before this agent, so the hooks' state is made as its service starts,
    at its first request at the latest: the agent's first instruction links where root
    is about to make it, then it asks. Root neither follows nor writes through the link
    (at worst the state is kept in memory), answers, and the agent's code is initd's."""
    where, target = PLANTS[name]
    path = agent.state / where.format(sid=sid) if where else agent.state
    first = (f"mkdir -p '{path.parent}' && rm -rf '{path}' && "
             f"ln -s '{getattr(canary, target)}' '{path}'")
    try:
        init = boot("sh", "-c", f"{first} && {sys.executable} -m initd health >/dev/null; "
                                "echo asked=$?")
        assert init.wait(timeout=120) == 0, init.stderr[-3000:]
        assert init.stdout_lines[-1] == "asked=0", init.stderr[-3000:]
        assert events(init.stderr).count("hook service start") == 1
        assert canary.changes() == []
        assert canary.leaked_into(agent.home) == []
    finally:  # (the agent user is the worker's: its later tests get a home as it was)
        if path.is_symlink():
            path.unlink()
        as_agent(agent, f"mkdir -p '{agent.state}'")
