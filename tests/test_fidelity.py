"""Invariant 1: an active reaper never turns a failed child into a success."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.support.harness import SUPPORT, UNSHARE

FIDELITY = [sys.executable, str(SUPPORT / "fidelity.py")]


def false_successes(*args: str, pidns: bool) -> tuple[int, int]:
    out = subprocess.run([*(UNSHARE if pidns else []), *FIDELITY, *args],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    m = re.search(r"runs=(\d+) false_successes=(\d+)", out.stdout)
    assert m, out.stdout + out.stderr
    return int(m.group(1)), int(m.group(2))


@pytest.mark.slow
def test_1000_failing_runs_under_pid1_reaper_report_no_success() -> None:
    assert false_successes("-n", "1000", pidns=True) == (1000, 0)


def test_failing_runs_under_subreaper_report_no_success() -> None:
    assert false_successes("-n", "300", pidns=False) == (300, 0)


def test_negative_control_same_process_reaper_steals_statuses() -> None:
    """Proves the check can fail: a waitpid(-1) beside subprocess yields false successes."""
    runs, successes = false_successes("-n", "300", "--same-process-reaper", pidns=False)
    assert runs == 300
    assert successes > 0
