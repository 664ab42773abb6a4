"""Whatever the agent holds, initd's stop takes the grace period and PID 1's sweep, not
more. Once, the agent holding ``.status.json.lock`` stretched a stop with ``--grace 1``
to 21 s: root, recording a background hook, waited 10 s for the lock, then 10 s more
to record that hook's end. Now root's writers stop waiting for any lock when the stop
begins, and what initd stops besides the agent shares one grace.

Proven by what root did, not by a stopwatch: the agent takes the lock once the second
hook runs, so root's record of that hook's end meets it at the stop, and root says it
gave up because initd was stopping, never after its 10 s wait (as the old stop did).
The wait for initd's exit is only a guard against a stop that never ends."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from tests.support.attack import Agent, agent_script, as_agent, hook

HOLD = """
    import fcntl, os, signal, sys, time
    path = sys.argv[1]

    def second_hook_runs():  # (sleep's own argv: the shell before its exec does not count)
        for name in os.listdir("/proc"):
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if f.read().startswith(b"sleep\\x001002"):
                        return True
            except OSError:
                continue
        return False

    deadline = time.monotonic() + 60
    while not second_hook_runs() and time.monotonic() < deadline:
        time.sleep(0.01)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    if os.fork() == 0:  # the lock stays held, by a process that ignores TERM
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(1000)
    print("held" if second_hook_runs() else "the second hook never ran", flush=True)
    time.sleep(1000)
"""
GRACE = 1.0
GAVE_UP = "held by another process (initd is stopping): not written"
WAITED = "held by another process (for over"  # (the old code: "… for over 10s")


@pytest.mark.slow
@pytest.mark.parametrize("devcontainer", [False, True], ids=["hooks", "hooks+devcontainer"])
def test_a_lock_the_agent_holds_never_stretches_the_stop(
        boot, agent: Agent, ws: Path, sid: str, devcontainer: bool) -> None:
    hooks = ws / ".discobot" / "hooks"
    # the first hook is recorded freely; the second runs when the agent takes the lock:
    # root's record of its end (and maybe of its start) meets the lock at the stop
    hook(hooks, "10-first.sh", "sleep 1", owner=agent, type="session", blocking=False)
    hook(hooks, "20-second.sh", "trap '' TERM; exec sleep 1002", owner=agent,
         type="session", blocking=False)
    if devcontainer:  # a daemon that ignores TERM, left by postStartCommand
        (ws / ".devcontainer.json").write_text(
            '{"postStartCommand": "setsid sh -c \'trap \\"\\" TERM; sleep 1003\' '
            '</dev/null >/dev/null 2>&1 &"}')
    lock = agent.state / sid / "hooks" / ".status.json.lock"
    as_agent(agent, f"mkdir -p {lock.parent}")
    init = boot(sys.executable, agent_script(HOLD), str(lock),
                more=("--grace", str(GRACE)))
    said = init.expect("^(held|the second hook never ran)$", timeout=90).group(1)
    assert said == "held", init.stderr[-3000:]
    init.signal(signal.SIGTERM)
    assert init.wait(timeout=120) == 128 + signal.SIGTERM, init.stderr[-3000:]
    gave_up = [line for line in init.stderr.splitlines() if GAVE_UP in line]
    assert any('"20-second"' in line for line in gave_up), init.stderr[-3000:]
    assert WAITED not in init.stderr, init.stderr[-3000:]
