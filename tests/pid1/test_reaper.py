"""Invariant 1: one reaper, uncapped. Orphans never stay zombies, and the test can fail."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from initd.pid1 import reaper
from tests.support.harness import SUPPORT, UNSHARE, ns_pid, run, wait_for

STORM = [sys.executable, str(SUPPORT / "orphans.py")]


@pytest.mark.slow
def test_orphan_storm_as_pid1_leaves_no_zombie() -> None:
    init = run(["--", *STORM, "-n", "1000", "--ps"], timeout=60)
    assert "orphans=1000" in init.stdout_lines, init.stdout_lines
    assert "zombies=0" in init.stdout_lines
    assert "ps_zombies=0" in init.stdout_lines  # dumb-init's check: no Z in `ps -A -o state`
    assert init.code == 0


@pytest.mark.slow
def test_orphan_storm_as_subreaper_leaves_no_zombie() -> None:
    init = run(["--", *STORM, "-n", "1000"], pidns=False, timeout=60)
    assert "orphans=1000" in init.stdout_lines, init.stdout_lines
    assert "zombies=0" in init.stdout_lines
    assert init.code == 0


@pytest.mark.slow
def test_negative_control_without_reaper_zombies_stay() -> None:
    """The same storm under a PID 1 that never reaps: the check above must see zombies."""
    out = subprocess.run([*UNSHARE, *STORM, "-n", "200", "--settle", "1", "--ps"],
                         capture_output=True, text=True, timeout=60)
    assert "zombies=200" in out.stdout.splitlines(), out.stdout
    assert "ps_zombies=0" not in out.stdout.splitlines()


@pytest.mark.slow
@pytest.mark.parametrize("pidns", [True, False], ids=["pid1", "subreaper"])
def test_leftover_daemon_is_swept_after_cmd_exits(initd, pidns: bool) -> None:
    """tini#180: the agent's leftovers get TERM (then KILL), not a silent kernel KILL."""
    daemon = ("setsid sh -c 'trap \"\" TERM; echo daemon $$; exec sleep 1000' "
              "</dev/null & sleep 0.3; exit 3")
    init = initd(["-v", "--log-format", "json", "--", "sh", "-c", daemon], pidns=pidns)
    pid_in_ns = int(init.expect(r"^daemon (\d+)").group(1))
    # by its pid, not its name: it says its pid before it execs sleep (once, on a busy
    # host, it was still "sh" when looked for)
    host_pids = [p for p in init.descendants() if ns_pid(p.pid) == pid_in_ns]
    assert host_pids, f"daemon {pid_in_ns} not found"
    assert init.wait() == 3  # CMD's code, whatever the sweep had to do
    # it ignored TERM: KILLed after PID 1's short sweep grace, which initd's log tells (a
    # sweep that never escalated would never end: init.wait's deadline)
    logged = [json.loads(line) for line in init.stderr.splitlines() if line.startswith("{")]
    sweep = [(e["event"], e.get("signal")) for e in logged
             if str(e.get("event")).startswith("sweep")]
    assert sweep == [("sweeping leftover processes", "SIGTERM"),
                     ("sweep grace over", "SIGKILL")], init.stderr[-3000:]
    for p in host_pids:
        assert not p.is_running() or p.status() == psutil.STATUS_ZOMBIE


def test_subreaper_sweep_spares_processes_outside_its_tree(initd) -> None:
    """Off PID 1 the sweep must only touch initd's own descendants (never kill(-1))."""
    bystander = subprocess.Popen(["sleep", "30"])
    try:
        init = initd(["--", "sh", "-c", "(sleep 1000 &); exit 0"], pidns=False)
        assert init.wait() == 0
        assert bystander.poll() is None
    finally:
        bystander.send_signal(signal.SIGKILL)
        bystander.wait()


def test_an_exit_status_is_what_a_shell_reports() -> None:
    """reaper.exit_code: N for an exit, 128+S for a death by signal S (tini's, bash's $?)."""
    for script, code in (("exit 0", 0), ("exit 3", 3), ("exit 255", 255),
                         ("kill -TERM $$", 143), ("kill -KILL $$", 137)):
        pid = os.fork()
        if pid == 0:
            os.execv("/bin/sh", ["sh", "-c", script])
        _, status = os.waitpid(pid, 0)
        assert reaper.exit_code(status) == code, script


def test_descendants_are_found_from_one_pass_over_proc(tmp_path: Path) -> None:
    """reaper.descendants: children and grandchildren of a real tree, never the root
    itself nor a process outside it, whatever its command's name holds."""
    odd = tmp_path / "a) b ("  # (a name with blanks and parentheses, as /proc/PID/stat shows it)
    odd.symlink_to("/bin/sleep")
    tree = subprocess.Popen(["sh", "-c", f"'{odd}' 60 & sleep 60 & wait"])
    outside = subprocess.Popen(["sleep", "60"])
    try:
        def found() -> list[int] | None:
            below = reaper.descendants(tree.pid)
            return below if len(below) >= 2 else None
        below = wait_for(found, timeout=30, what="the tree's two sleeps")
        assert isinstance(below, list)
        assert tree.pid not in below and outside.pid not in below
        assert len(below) == 2
    finally:
        for pid in reaper.descendants(tree.pid):
            os.kill(pid, 9)
        tree.kill()
        outside.kill()
        tree.wait()
        outside.wait()
