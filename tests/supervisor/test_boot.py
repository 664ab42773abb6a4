"""The agent starts before everything it does not need: with no hook to run before it,
the supervisor binds the control socket, starts the agent, and only then makes the hooks'
state and starts the hook service, which recovers what a previous run left "running" at
its start. Proved by order (pids, allotted in order in a fresh PID namespace; what the
agent saw), never by time. That recovery leaves alone a hook whose runner lives (the
agent's own may be running by then), and root takes no lock of the agent's tree once the
agent runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from initd.commands import options
from initd.config import log, settings
from initd.hooks import context, recovery
from initd.hooks.status.store import StatusStore
from initd.process import spawn
from initd.supervisor.workspace import hook_context
from tests.hooks.support import forget_session
from tests.service.support import service_process
from tests.support import imports
from tests.support.harness import Initd, wait_for

BIN = str(Path(sys.executable).parent)
AGENT = """#!/bin/sh
echo $$ > "$OUT/agent.pid"
i=0  # the hook service answers once it is started (a deadline, not a wait measured)
until initd health > "$OUT/health.json" 2>/dev/null; do
  i=$((i + 1)); [ "$i" -lt 1200 ] || exit 9
  sleep 0.05
done
cp "$STATUS" "$OUT/status.json"
"""


def stale(hook_id: str, runner: int, runner_start: int | None) -> dict[str, object]:
    """A status.json entry a runner left "running" when it stopped."""
    return {"hookId": hook_id, "hookName": hook_id, "type": "pre-commit",
            "lastResult": "running", "runCount": 1, "failCount": 0,
            "consecutiveFailures": 0, "startedAt": "2026-11-26T00:00:00.000Z",
            "runner": runner, "runnerStart": runner_start, "pgid": None, "pgidStart": None}


def no_pid() -> int:
    """A pid no process has (the kernel's pid_max, never given out)."""
    return int(Path("/proc/sys/kernel/pid_max").read_text())


@pytest.mark.slow
def test_the_agent_starts_before_the_hook_service_and_the_last_runs_recovery(
        tmp_path: Path) -> None:
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    sid = f"first-{uuid.uuid4().hex[:8]}"
    home = Path(os.environ["HOME"])
    status = home / ".discobot" / sid / "hooks" / "status.json"
    status.parent.mkdir(parents=True)  # a previous run's, left with a hook "running"
    status.write_text(json.dumps({"version": 1, "hooks": {
        "20-stale": stale("20-stale", no_pid(), 12345)}, "pendingHooks": [],
        "lastEvaluatedAt": None}))
    agent = tmp_path / "agent.sh"
    agent.write_text(AGENT)
    agent.chmod(0o755)
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "OUT": str(out),
           "STATUS": str(status)}
    try:
        init = Initd(["--workspace", str(ws), "--session-id", sid, "--service",
                      "--hooks-dir", str(tmp_path / "no-image"), "--", str(agent)], env=env)
        assert init.wait(60) == 0, init.stderr
        health = json.loads((out / "health.json").read_text())
        # pids are allotted in order in the new namespace: the agent was forked first
        assert int((out / "agent.pid").read_text()) < health["service"]["pid"]
        # and what the previous run left "running" was recovered before the service
        # answered: a failure, as at any boot
        seen = json.loads((out / "status.json").read_text())["hooks"]["20-stale"]
        assert seen["lastResult"] == "failure" and "runner" not in seen
    finally:
        forget_session(sid)


def test_once_the_agent_runs_recovery_leaves_a_live_runners_hook(tmp_path: Path) -> None:
    """Once the agent has started, root's context recovers nothing, and the hook
    service's, made at its start as the agent's, takes only what a dead runner left;
    before the agent starts, boot takes every "running" hook (nothing of initd's runs
    yet)."""
    sid = f"first-{uuid.uuid4().hex[:8]}"
    flags = options.parse(["--workspace", str(tmp_path), "--session-id", sid,
                           "--hooks-dir", str(tmp_path / "no-image"), "--", "true"])
    config = settings.load(flags, {})
    runner = subprocess.Popen(["sleep", "60"])  # the agent's own `initd hooks run`
    try:
        for agent_started, live_result in ((True, "running"), (False, "failure")):
            store = StatusStore.for_session(hook_context(config, None, log.get()).state, sid)
            store.update(lambda status: status["hooks"].update({
                "10-live": stale("10-live", runner.pid, spawn.start_ticks(runner.pid)),
                "20-dead": stale("20-dead", no_pid(), 12345)}))
            hook_context(config, None, log.get(), agent_started=agent_started)
            if agent_started:  # root left both as they were; the service recovers
                assert {h["lastResult"] for h in store.read()["hooks"].values()} == {
                    "running"}
                context.make(config, None, log.get(), sid, recover=recovery.runner_gone)
            hooks = store.read()["hooks"]
            assert hooks["20-dead"]["lastResult"] == "failure"
            assert hooks["10-live"]["lastResult"] == live_result, agent_started
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
        forget_session(sid)


def test_a_workspace_that_is_no_repository_never_imports_the_chain(tmp_path: Path) -> None:
    """The pre-commit chain's modules (~4 ms of a boot) only for a repository's top."""
    ws = tmp_path / "ws"
    ws.mkdir()
    args = ("--workspace", str(ws), "--no-service", "--state-dir", str(tmp_path / "state"),
            "--hooks-dir", str(tmp_path / "none"), "--", "true")
    assert "initd.hooks.precommit" not in imports.imported(*args, cwd=tmp_path)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    assert "initd.hooks.precommit" in imports.imported(*args, cwd=tmp_path)  # (and then it is)


@pytest.mark.slow
def test_a_lock_the_agent_holds_never_holds_root_once_the_agent_runs(tmp_path: Path) -> None:
    """Once the agent runs, a process of its own may hold status.json's lock for good.
    Root's supervisor then takes no lock of the agent's tree before it supervises: the
    hook service (the agent's own, at its start) recovers what a dead runner left. Root
    waiting there (up to the lock's 10 s) would forward no signal and start no stop."""
    import fcntl

    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    sid = f"first-{uuid.uuid4().hex[:8]}"
    hooks = Path(os.environ["HOME"]) / ".discobot" / sid / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "status.json").write_text(json.dumps({"version": 1, "hooks": {
        "20-stale": stale("20-stale", no_pid(), 12345)}, "pendingHooks": [],
        "lastEvaluatedAt": None}))
    agent = tmp_path / "agent.sh"
    agent.write_text('#!/bin/sh\ntouch "$OUT/started"\nexec sleep 1000\n')
    agent.chmod(0o755)
    lock = (hooks / ".status.json.lock").open("w")  # held as the agent's process would
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        init = Initd(["--workspace", str(ws), "--session-id", sid, "--service",
                      "--hooks-dir", str(tmp_path / "no-image"), "--", str(agent)],
                     env={**os.environ, "OUT": str(out)})
        wait_for(lambda: (out / "started").exists(), timeout=60, what="the agent")
        service_process(init)  # root went on to start the service: nothing held it
        lock.close()  # (the service, the agent's, may now recover: its own business)
        init.signal(signal.SIGTERM)
        assert init.wait(60) == 128 + signal.SIGTERM, init.stderr
        held = [line for line in init.stderr.splitlines()
                if "held by another process" in line and '"supervisor"' in line]
        assert held == []
    finally:
        lock.close()
        forget_session(sid)
