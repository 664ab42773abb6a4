"""Whatever the agent holds, initd's stop takes the grace period and PID 1's sweep, not
more. Once, the agent holding ``.status.json.lock`` stretched a stop with ``--grace 1``
to 21 s: root, recording a background hook, waited 10 s for the lock, then 10 s more
to record that hook's end. Now root's writers stop waiting for any lock when the stop
begins, and what initd stops besides the agent shares one grace.

The deadline below is an event's (initd's exit), set far above the bound and far below
what the old stop took, so a busy machine does not make it fail."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from tests.support.attack import Agent, agent_script, as_agent, hook
from tests.support.harness import wait_for

HOLD = """
    import fcntl, os, signal, sys, time
    path = sys.argv[1]
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    if os.fork() == 0:  # the lock stays held, by a process that ignores TERM
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(1000)
    print("held", flush=True)
    time.sleep(1000)
"""
GRACE = 1.0
DEADLINE = 12.0  # the bound is ~GRACE + 1 s; the old stop took 21 s


def hook_running(init, needle: str) -> bool:  # type: ignore[no-untyped-def]
    for process in init.descendants():
        try:
            if needle in " ".join(process.cmdline()):
                return True
        except Exception:  # (gone, or a zombie, meanwhile)
            continue
    return False


@pytest.mark.slow
@pytest.mark.parametrize("devcontainer", [False, True], ids=["hooks", "hooks+devcontainer"])
def test_a_lock_the_agent_holds_never_stretches_the_stop(
        boot, agent: Agent, ws: Path, sid: str, devcontainer: bool) -> None:
    hooks = ws / ".discobot" / "hooks"
    # the second background hook starts once the agent holds the lock: root's record of
    # it running, and then of its end, each meet the lock
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
    init.expect("^held$", timeout=30)
    wait_for(lambda: hook_running(init, "sleep 1002"), timeout=30, what="the second hook")
    init.signal(signal.SIGTERM)
    assert init.wait(timeout=DEADLINE) == 128 + signal.SIGTERM, init.stderr[-3000:]
