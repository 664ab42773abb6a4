"""Invariant 2: the agent's children start with no blocked and no ignored signals.

tini's sigconf test: whatever mask and dispositions initd's own parent leaves behind,
the grandchild's /proc/self/status shows SigBlk and SigIgn all zero.
"""

from __future__ import annotations

import os
import signal
import sys

import pytest

from tests.support.harness import run

PROBE = ["sh", "-c", "grep -E '^Sig(Blk|Ign):' /proc/self/status"]


def hostile_parent() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGTTIN, signal.SIGUSR1})
    for sig in (signal.SIGINT, signal.SIGTTOU, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)


@pytest.mark.parametrize("pidns", [True, False], ids=["pid1", "subreaper"])
@pytest.mark.parametrize("parent", [None, hostile_parent], ids=["clean", "hostile-parent"])
def test_grandchild_signal_state_is_clean(pidns: bool, parent) -> None:
    init = run(["--", *PROBE], pidns=pidns, preexec_fn=parent)
    assert init.code == 0, init.stderr
    assert sorted(init.stdout_lines) == ["SigBlk:\t0000000000000000",
                                         "SigIgn:\t0000000000000000"], init.stdout_lines


def test_started_by_posix_spawn_like_make(tmp_path) -> None:
    """glibc's posix_spawn leaves 32 and 33 ignored (GNU make starts commands this way):
    the agent must not inherit that."""
    out = tmp_path / "out"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        pid = os.posix_spawn(sys.executable, [sys.executable, "-m", "initd", "--", *PROBE],
                             os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, fd, 1)],
                             setsigdef=[])
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert sorted(out.read_text().splitlines()) == ["SigBlk:\t0000000000000000",
                                                    "SigIgn:\t0000000000000000"]
