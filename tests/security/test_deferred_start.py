"""Attacks on the window the hook service's deferred start opens (supervisor/deferred.py):
the agent runs, with no service of its own yet, for as long as it does not connect. In
these tests the delay is made 600 s in root's supervisor (its PYTHONPATH), so the window
stays open until the agent itself connects, and everything it does first is done before
any service exists (each script checks that there is none, and says so).

- the agent changes a guard's file, then sends the event the guard is for: the event
  waits in the backlog, starts the service, and is answered by the guard of the session's
  start (invariant 15), never passed because no service was up yet (invariant 12);
- it floods the socket with connections that never send (a full backlog) around its
  event: one service is started, never a second, and the event is answered by the guard;
- it kills each service that its connections start: each comes back with the guards;
- it plants links where root makes the session's state at the service's start: root
  follows none of them (its canary unchanged), and the service still answers.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.test_first_instruction import AGENTS, GUARD, RM, claude, held, place
from tests.support.attack import Agent, Canary, agent_script, as_agent, boot_args
from tests.support.harness import Initd, _clean_env

LONG_SETTLE = "from initd.supervisor import deferred\ndeferred.SETTLE = 600.0\n"
NONE_YET = """
    import os, subprocess
    def services():
        out = subprocess.run(["pgrep", "-u", str(os.getuid()), "-f", "initd servic[e]"],
                             capture_output=True, text=True)
        return out.stdout.split()
    before = services()  # the agent's first look: no service of its uid yet
"""


@pytest.fixture
def root_env() -> Iterator[dict[str, str]]:
    """initd's environment, its deferred start made 600 s (a root-only sitecustomize:
    the agent's processes, which inherit the variable, cannot read it)."""
    where = tempfile.mkdtemp(prefix="initd-atk-settle-")
    Path(where, "sitecustomize.py").write_text(LONG_SETTLE)
    env = _clean_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [where, env.get("PYTHONPATH")]))
    yield env
    shutil.rmtree(where, ignore_errors=True)


def fired(init: Initd) -> dict[str, object]:
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    result: dict[str, object] = json.loads(init.stdout_lines[-1])
    assert result["before"] == [], result  # the window was open: no service yet
    return result


REWRITE_THEN_ASK = NONE_YET + """
    import json, sys
    settings, swapped, data = sys.argv[1:4]
    with open(settings, "w") as f:  # the first instruction: the guard replaced
        f.write(open(swapped).read())
    out = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data", "-"],
                         input=open(data).read(), capture_output=True, text=True,
                         timeout=120)
    try:
        answer = json.loads(out.stdout)
    except ValueError:
        answer = None
    print(json.dumps({"before": before, "code": out.returncode, "answer": answer,
                      "stderr": out.stderr[-2000:]}), flush=True)
"""


def swapped_and_payload(text: str) -> tuple[str, str]:
    script_dir = Path(agent_script("")).parent
    (script_dir / "swapped").write_text(text)
    (script_dir / "payload.json").write_text(json.dumps(RM))
    for name in ("swapped", "payload.json"):
        (script_dir / name).chmod(0o644)
    return str(script_dir / "swapped"), str(script_dir / "payload.json")


def test_a_guard_changed_before_the_service_exists_still_answers(
        boot, agent: Agent, ws: Path, root_env: dict[str, str]) -> None:
    path = place(agent, ws, ".claude/settings.json", claude(GUARD))
    swapped, payload = swapped_and_payload(claude(AGENTS))
    init = boot(sys.executable, agent_script(REWRITE_THEN_ASK), str(path), swapped, payload,
                env=root_env)
    result = fired(init)
    assert held(result, True), result  # the guard of the start ran, and blocked


FLOOD = NONE_YET + """
    import json, socket, sys
    from tests.support.agent_side import call
    emit = subprocess.Popen([sys.executable, "-m", "initd", "emit", "pre_tool", "--data",
                             "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    kept, refused = [], 0
    for _ in range(400):  # connections that never send: the backlog full, and more
        conn = socket.socket(socket.AF_UNIX)
        conn.setblocking(False)
        try:
            conn.connect(os.environ["INITD_SOCKET"])
            kept.append(conn)
        except BlockingIOError:
            conn.close()
            refused += 1
    out, err = emit.communicate(open(sys.argv[1]).read(), timeout=120)
    code, health = call("GET", "/v1/health")
    print(json.dumps({"before": before, "code": emit.returncode, "answer": json.loads(out),
                      "refused": refused, "restarts": health["service"]["restarts"],
                      "services": services()}), flush=True)
"""


def test_a_flood_of_connections_starts_one_service_and_the_guard_answers(
        boot, agent: Agent, ws: Path, root_env: dict[str, str]) -> None:
    place(agent, ws, ".claude/settings.json", claude(GUARD))
    _, payload = swapped_and_payload("")
    init = boot(sys.executable, agent_script(FLOOD), payload, env=root_env)
    result = fired(init)
    assert held(result, True), result
    assert result["restarts"] == 0 and len(result["services"]) == 1, result  # (one start)


KILL_EACH = NONE_YET + """
    import json, sys, time
    from tests.support.agent_side import service_pid
    killed = []
    for _ in range(2):  # a connection starts it (or it is back): killed at once
        pid = service_pid(timeout=60, not_pid=killed[-1] if killed else None)
        os.kill(pid, 9)
        killed.append(pid)
    out = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data", "-"],
                         input=open(sys.argv[1]).read(), capture_output=True, text=True,
                         timeout=120)
    print(json.dumps({"before": before, "code": out.returncode,
                      "answer": json.loads(out.stdout), "killed": killed}), flush=True)
"""


@pytest.mark.slow
def test_each_service_the_agent_kills_comes_back_with_the_guards(
        boot, agent: Agent, ws: Path, root_env: dict[str, str]) -> None:
    place(agent, ws, ".claude/settings.json", claude(GUARD))
    _, payload = swapped_and_payload("")
    init = boot(sys.executable, agent_script(KILL_EACH), payload, env=root_env)
    result = fired(init)
    assert held(result, True), result
    assert len(set(result["killed"])) == 2, result  # type: ignore[arg-type]


PLANT_THEN_ASK = NONE_YET + """
    import json, sys
    subprocess.run(["sh", "-c", sys.argv[1]], check=True, timeout=60)  # the plant
    out = subprocess.run([sys.executable, "-m", "initd", "health"], capture_output=True,
                         text=True, timeout=120)
    print(json.dumps({"before": before, "code": out.returncode, "out": out.stdout,
                      "err": out.stderr[-2000:]}), flush=True)
"""
PLANTS = {  # what the agent puts where root makes the session's state, at the service's
    # start (a workspace that is no repository and has no session hook: nothing of the
    # hooks' state is made before the agent starts)
    "the session's directory, a link to root's": "mkdir -p ~/.discobot && "
                                                 "ln -s {canary} ~/.discobot/{sid}",
    "the state's directory, a link to root's": "rm -rf ~/.discobot && ln -s {canary} "
                                               "~/.discobot",
    "the hooks' directory, a link to root's": "mkdir -p ~/.discobot/{sid} && "
                                              "ln -s {canary} ~/.discobot/{sid}/hooks",
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_state_planted_before_the_service_starts_reaches_nothing_of_roots(
        initd, agent: Agent, sid: str, image: str, root_env: dict[str, str],
        plant: str) -> None:
    canary = Canary()
    ws = Path(tempfile.mkdtemp(prefix="initd-atk-ws-"))
    os.chmod(ws, 0o755)
    os.chown(ws, agent.uid, agent.gid)
    as_agent(agent, f"mkdir -p {ws}/.discobot/hooks")
    try:
        init = initd([*boot_args(agent, ws, sid, image), "--", sys.executable,
                      agent_script(PLANT_THEN_ASK),
                      PLANTS[plant].format(canary=canary.dir, sid=sid)], env=root_env)
        result = fired(init)
        assert canary.changes() == [], canary.changes()
        assert '"status"' in str(result["out"]), result  # the service answered
    finally:
        as_agent(agent, "rm -rf ~/.discobot", check=False)
        shutil.rmtree(ws, ignore_errors=True)
        canary.remove()
