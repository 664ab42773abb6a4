"""Root never reads its decisions back from what the agent can write (invariant 8):
process groups named in ``status.json`` are never signalled by root, and a status file
that is huge, deeply nested or a FIFO neither crashes, hangs nor bloats boot."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.support.attack import Agent, agent_script, as_agent, hook

# A root daemon in a session of its own, started by the image's root session hook (a
# workspace's may leave none: tests/security/test_root_boundary.py): the process the
# agent will name. Its pid goes to a file the agent may read.
DAEMON = 'setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > "$DAEMON_PID"'

FORGE = """
    import json, os, sys, time
    from tests.support.agent_side import service_pid, start_ticks

    target = int(sys.argv[1]) if sys.argv[1] != "pid1" else 1
    store = sys.argv[2]
    service = service_pid()
    status = {"version": 1, "pendingHooks": [], "lastEvaluatedAt": None, "hooks": {
        "forged": {"hookId": "forged", "hookName": "forged", "type": "file",
                   "lastResult": "running", "runner": service, "pgid": target,
                   "pgidStart": start_ticks(target)}}}
    os.makedirs(store, exist_ok=True)
    with open(store + "/status.json.new", "w") as f:
        json.dump(status, f)
    os.replace(store + "/status.json.new", store + "/status.json")
    os.kill(service, 9)  # the agent kills its own hook service: root recovers
    service_pid(not_pid=service)  # back again
    time.sleep(3)  # (grace is 1 s) whatever root was going to do, it has done
    alive = os.path.exists(f"/proc/{target}")
    print("target alive" if alive else "target killed", flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("target", ["root-daemon", "pid1"])
def test_a_forged_process_group_in_status_json_is_never_signalled_by_root(
        boot, agent: Agent, ws: Path, sid: str, image: str, target: str) -> None:
    pid_file = Path(agent_script("")).with_name("daemon.pid")  # a directory all may read
    hook(Path(image), "10-daemon.sh", DAEMON, type="session", run_as="root", blocking=True)
    os.environ["DAEMON_PID"] = str(pid_file)
    try:
        init = boot(sys.executable, "-c", "import sys, subprocess; "
                    "pid = open(sys.argv[1]).read().strip() if sys.argv[2] != 'pid1' "
                    "else 'pid1'; sys.exit(subprocess.call([sys.executable, sys.argv[3], "
                    "pid, sys.argv[4]]))", str(pid_file), target, agent_script(FORGE),
                    str(agent.state / sid / "hooks"), more=("--grace", "1"))
        assert init.wait(timeout=60) == 0, init.stderr
    finally:
        del os.environ["DAEMON_PID"]
    assert init.stdout_lines == ["target alive"], init.stderr


BIG = 100 * 2**20


WRONG_TYPES = {"version": 1, "pendingHooks": [{"x": 1}], "hooks": {
    "x": {"lastResult": "running", "type": ["a"], "runner": "me", "pgid": {"a": 1},
          "hookId": 7, "runCount": True, "runnerStart": [1]},
    "y": {"lastResult": {"b": 2}, "type": "file"}}}


@pytest.mark.parametrize("garbage", ["nested", "huge", "fifo", "wrong types"])
def test_a_hostile_status_json_neither_crashes_hangs_nor_bloats_boot(
        boot, agent: Agent, ws: Path, sid: str, garbage: str) -> None:
    store = agent.state / sid / "hooks"
    as_agent(agent, f"mkdir -p {store}")
    hook(ws / ".discobot" / "hooks", "10-user.sh", "echo hi", owner=agent, type="session")
    path = store / "status.json"
    if garbage == "fifo":
        as_agent(agent, f"mkfifo {path}")
    else:
        with open(path, "wb") as f:
            if garbage == "nested":
                f.write(b"[" * 200_000 + b"]" * 200_000)
            elif garbage == "wrong types":  # ["a"] as a type once stopped every boot
                f.write(json.dumps(WRONG_TYPES).encode())
            else:
                f.write(b'{"hooks": {}, "pad": "' + b" " * BIG + b'"}')
        os.chown(path, agent.uid, agent.gid)
    # The agent reports its parent's (the supervisor's) peak memory. (A boot that hung
    # on the file, a FIFO's open say, would not end by this deadline.)
    init = boot("sh", "-c", 'grep VmHWM /proc/$PPID/status')
    assert init.wait(timeout=60) == 0, init.stderr
    peak_kib = int(init.stdout_lines[0].split()[1])
    assert peak_kib < 60 * 1024, f"the supervisor peaked at {peak_kib} KiB"
    status = json.loads(path.read_text()) if path.is_file() and not path.is_symlink() \
        else None
    assert status is not None and status["hooks"]["10-user"]["lastResult"] == "success"


HOLD = """
    import fcntl, os, sys, time
    path = sys.argv[1]
    if os.fork() == 0:  # a daemon of the agent's, in a session of its own, holds the lock
        os.setsid()
        fd = os.open(path, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        time.sleep(1000)
    time.sleep(3)  # (the background hook starts after 1 s, and root waits for the lock)
    print("agent done", flush=True)
"""


@pytest.mark.slow
def test_a_lock_the_agent_holds_never_wedges_root_or_its_shutdown(
        boot, agent: Agent, ws: Path, sid: str) -> None:
    """The agent holds status.json's lock for good: root, recording a background hook,
    records nothing (after LOCK_WAIT, or at once when initd stops), and initd still
    stops, with the agent's code."""
    store = agent.state / sid / "hooks"
    hooks = ws / ".discobot" / "hooks"
    hook(hooks, "10-wait.sh", "sleep 1", owner=agent, type="session", blocking=False)
    # still running when the agent is done: stopped, and recorded, while initd stops
    hook(hooks, "20-later.sh", "sleep 1000", owner=agent, type="session", blocking=False)
    as_agent(agent, f"mkdir -p {store} && touch {store}/.status.json.lock")
    init = boot(sys.executable, agent_script(HOLD), str(store / ".status.json.lock"))
    # a root wedged by the lock (or by a hook sleeping 1000 s) would not end by this deadline
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    assert init.stdout_lines == ["agent done"]
    # and while stopping, root gave the lock up at once rather than after LOCK_WAIT
    assert "held by another process (initd is stopping)" in init.stderr, init.stderr[-3000:]
