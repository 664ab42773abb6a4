"""Attacks on the guard snapshot itself (invariant 15): the memory file root seals before
the agent starts and hands to every start of the hook service, and the reader that fills
it from the agent's files, as the agent, before the agent runs.

- the agent cannot change the snapshot: no process of its uid holds it once the service
  has read it, one that held it could not change it (sealed), and the service it kills
  comes back with the guards of the start;
- what the agent leaves in its files for the next start (a FIFO, a link to a root secret
  or to /dev/zero, a huge file, a directory, a loop of links) costs the start nothing
  (the agent still starts), reaches no answer or log, and blocks: a guard initd could
  not read is that guard's error;
- a hooks directory whose heads are more than the snapshot keeps (its budget) is read
  up to it, and what is past it blocks: never a snapshot that leaves a guard out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.attack import Agent, Canary, agent_script, as_agent

GUARD = 'echo GUARD-RAN; echo "the guard says no" >&2; exit 2'
RM = json.dumps({"tool_name": "Bash", "tool_input": {"command": "rm -rf /data"}})
SETTINGS = json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": GUARD}]}]}})

HUNT = """
    import json, os, subprocess, sys
    from tests.support.agent_side import service_pid
    pid = service_pid()
    found = []  # every descriptor of every process of the agent's uid that is the snapshot
    for proc in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{proc}/fd"):
                if os.readlink(f"/proc/{proc}/fd/{fd}").startswith("/memfd:initd-guards"):
                    found.append(f"{proc}/{fd}")
        except OSError:
            continue  # (root's, or gone)
    os.kill(pid, 9)
    service_pid(not_pid=pid)  # the next service
    out = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data",
                          sys.argv[1]], capture_output=True, text=True, timeout=120)
    print(json.dumps({"found": found, "code": out.returncode, "out": out.stdout}), flush=True)
"""
TAMPER = """
    import errno, json, os, sys
    fd = int(sys.argv[1])
    tried = {}
    for what, act in [("write", lambda f: os.write(f, b"{}")),
                      ("truncate", lambda f: os.ftruncate(f, 0)),
                      ("grow", lambda f: os.ftruncate(f, 1 << 20)),
                      ("write at its start", lambda f: os.pwrite(f, b"{", 0)),
                      ("write, opened again", lambda f: os.write(
                          os.open(f"/proc/self/fd/{f}", os.O_RDWR), b"{}"))]:
        try:
            act(fd)
            tried[what] = "done"
        except OSError as err:
            tried[what] = errno.errorcode.get(err.errno, str(err.errno))
    print(json.dumps(tried), flush=True)
"""


def settings(agent: Agent, ws: Path, text: str = SETTINGS) -> Path:
    path = ws / ".claude" / "settings.json"
    as_agent(agent, f"mkdir -p {path.parent}")
    path.write_text(text)
    os.chown(path, agent.uid, agent.gid)
    return path


def test_the_agent_finds_no_snapshot_and_its_next_service_has_the_guards(
        boot, agent: Agent, ws: Path) -> None:
    """The service reads the snapshot and closes it as it starts: nothing of the agent's
    holds it (root keeps it), and the service the agent kills comes back with it."""
    settings(agent, ws)
    init = boot(sys.executable, agent_script(HUNT), RM)
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    got = json.loads(init.stdout_lines[-1])
    assert got["found"] == [] and got["code"] == 2 and "GUARD-RAN" in got["out"], got


def test_a_sealed_snapshot_cannot_be_changed_by_whoever_holds_it(agent: Agent) -> None:
    """What a service has for the moment it reads it: the agent, holding the very memory
    file root made (inherited), can change nothing of it."""
    from initd.state import snapshot

    fd = snapshot.made(snapshot.Snapshot().encode())
    try:
        got = subprocess.run(
            ["runuser", "-u", agent.name, "--", sys.executable, agent_script(TAMPER), str(fd)],
            pass_fds=(fd,), capture_output=True, text=True, timeout=60, cwd="/")
        assert got.returncode == 0, got.stderr
        assert json.loads(got.stdout) == {what: "EPERM" for what in (
            "write", "truncate", "grow", "write at its start", "write, opened again")}
        assert snapshot.load(fd).failed is None  # and it is still whole
    finally:
        os.close(fd)


ASK = """
    import json, subprocess, sys
    out = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data",
                          sys.argv[1]], capture_output=True, text=True, timeout=120)
    print(json.dumps({"code": out.returncode, "out": out.stdout, "err": out.stderr}),
          flush=True)
"""
PLANTS = ["fifo", "link to a root secret", "link to /dev/zero", "huge", "a directory",
          "a loop of links"]


def plant(agent: Agent, path: Path, canary: Canary, how: str) -> None:
    """What the agent left at ``path`` in an earlier session, for this start."""
    as_agent(agent, f"mkdir -p {path.parent} && rm -rf {path}")
    script = {"fifo": f"mkfifo {path}",
              "link to a root secret": f"ln -s {canary.secret} {path}",
              "link to /dev/zero": f"ln -s /dev/zero {path}",
              "huge": f"printf '%s' '{SETTINGS}' > {path} && truncate -s 64M {path}",
              "a directory": f"mkdir {path}",
              "a loop of links": f"ln -s {path}.b {path} && ln -s {path} {path}.b"}[how]
    as_agent(agent, script)


@pytest.mark.parametrize("how", PLANTS)
def test_what_the_agent_left_in_its_files_costs_nothing_and_blocks(
        boot, agent: Agent, ws: Path, canary: Canary, how: str) -> None:
    plant(agent, ws / ".claude" / "settings.json", canary, how)
    init = boot(sys.executable, agent_script(ASK), RM)
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    got = json.loads(init.stdout_lines[-1])
    assert got["code"] == 2, got  # a file initd could not read: that guard's error blocks
    assert "settings.json" in got["out"], got
    assert canary.token not in init.stderr + got["out"] + got["err"]
    assert canary.changes() == []


BUDGET_FILL = """
    import json, subprocess, sys
    out = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data",
                          sys.argv[1]], capture_output=True, text=True, timeout=120)
    print(json.dumps({"code": out.returncode, "out": out.stdout}), flush=True)
"""


@pytest.mark.slow
def test_hooks_past_the_snapshots_budget_block(boot, agent: Agent, ws: Path) -> None:
    """600 scripts with 64 KiB heads: 37.5 MiB of heads, over the 32 MiB a snapshot
    keeps. A guard past the budget is not simply left out: what was not kept blocks."""
    hooks = ws / ".discobot" / "hooks"
    padding = "#" * (64 * 1024)
    for n in range(600):
        path = hooks / f"{n:04d}-pad.sh"
        path.write_text(f"#!/bin/sh\n{padding}\n")
        os.chown(path, agent.uid, agent.gid)
    init = boot(sys.executable, agent_script(BUDGET_FILL), RM)
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    got = json.loads(init.stdout_lines[-1])
    assert got["code"] == 2 and "the guard snapshot holds at most" in got["out"], got


STALL = ("for i in $(seq 6000); do p=$(pgrep -u \"$(id -u)\" -f 'guardse[t]'); "
         "[ -n \"$p\" ] && kill -STOP $p && exit 0; sleep 0.01; done")


@pytest.mark.timeout(120)
def test_a_stop_while_the_snapshot_is_read_ends_the_boot_before_the_agent(
        boot, agent: Agent, ws: Path) -> None:
    """The reader is a process of the agent user's, before the agent: a background
    session hook of the workspace's (one too) may stop it. initd waits for it no longer
    than its stop signal: the boot ends with 128+15 and the agent never starts."""
    settings(agent, ws)
    # the reader must live long enough to be caught: 900 file hooks with 24 KiB heads
    # (21 MiB, under the snapshot's budget) to read and hash, none of which runs at boot.
    # (With one settings file it lived ~50 ms, and on a loaded machine the hook's pgrep
    # once missed it: the agent started, and the test waited past its own timeout.)
    padding = "#" * (24 * 1024)
    for n in range(900):
        pad = ws / ".discobot" / "hooks" / f"{n + 100:04d}-pad.sh"
        pad.write_text(f"#!/bin/sh\n#---\n# type: file\n# pattern: '*.nomatch'\n#---\n"
                       f"{padding}\n")
        os.chown(pad, agent.uid, agent.gid)
    hook = ws / ".discobot" / "hooks" / "05-stall.sh"
    hook.write_text(f"#!/bin/sh\n#---\n# type: session\n# blocking: false\n#---\n{STALL}\n")
    hook.chmod(0o755)
    os.chown(hook, agent.uid, agent.gid)
    marker = ws / "agent-ran"  # (the agent can write there: it never starts to)
    init = boot("sh", "-c", f"touch {marker}")
    assert _wait_for_stopped_reader(agent), init.stderr[-3000:]
    init.signal(15)
    assert init.wait(timeout=60) == 143, init.stderr[-3000:]
    assert not marker.exists()


def _wait_for_stopped_reader(agent: Agent) -> bool:
    import time

    import psutil

    deadline = time.monotonic() + 45  # (under the test's own timeout: a clean failure)
    while time.monotonic() < deadline:
        for proc in psutil.process_iter(["uids", "cmdline", "status"]):
            info = proc.info
            if info["uids"] and info["uids"].real == agent.uid and \
                    "guardset" in " ".join(info["cmdline"] or ()) and \
                    info["status"] == psutil.STATUS_STOPPED:
                return True
        time.sleep(0.05)
    return False
