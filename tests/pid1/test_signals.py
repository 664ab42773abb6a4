"""Signals reach the agent; stops are graceful, then forceful; nothing is left behind."""

from __future__ import annotations

import json
import signal
import sys
import time

import psutil
import pytest

from initd.pid1 import signals as pid1signals
from tests.support.harness import PRINT_SIGNALS, wait_for

STOPPING = {signal.SIGTERM}  # the default stop signal; INT and QUIT are CMD's to judge
PASSED_ON = sorted(pid1signals.FORWARDED - STOPPING)


@pytest.mark.parametrize("sig", PASSED_ON, ids=lambda s: signal.Signals(s).name)
def test_signal_reaches_cmd_and_cmd_keeps_running(initd, sig: int) -> None:
    init = initd(["--", *PRINT_SIGNALS, "--exit-on", "SIGTERM"])
    init.expect(r"^ready")
    init.signal(sig)
    init.expect(rf"^{int(sig)}$")
    init.signal(signal.SIGTERM)
    init.expect(rf"^{int(signal.SIGTERM)}$")
    assert init.wait() == 0


def test_every_signal_in_one_run_as_subreaper(initd) -> None:
    init = initd(["--", *PRINT_SIGNALS, "--exit-on", "SIGTERM"], pidns=False)
    init.expect(r"^ready")
    for sig in PASSED_ON:
        init.signal(sig)
        init.expect(rf"^{int(sig)}$")
    init.signal(signal.SIGTERM)
    assert init.wait() == 0


@pytest.mark.parametrize("sig", sorted(STOPPING), ids=lambda s: signal.Signals(s).name)
def test_stop_signal_is_graceful(initd, sig: int) -> None:
    init = initd(["--grace", "20", "--", *PRINT_SIGNALS, "--exit-on", signal.Signals(sig).name])
    init.expect(r"^ready")
    init.signal(sig)
    init.expect(rf"^{int(sig)}$")
    assert init.wait() == 0  # the agent exited 0 by itself: no KILL was needed


def test_stop_signal_exit_code_is_cmds(initd) -> None:
    init = initd(["--", "sleep", "100"])
    wait_for(lambda: [p for p in init.descendants() if p.name() == "sleep"], what="sleep")
    init.signal(signal.SIGTERM)
    assert init.wait() == 128 + signal.SIGTERM


@pytest.mark.slow
def test_cmd_ignoring_term_is_killed_after_grace(initd) -> None:
    init = initd(["--grace", "1.5", "--", *PRINT_SIGNALS, "--ignore", "SIGTERM"])
    init.expect(r"^ready")
    sent = time.monotonic()
    init.signal(signal.SIGTERM)
    assert init.wait() == 128 + signal.SIGKILL
    # the grace was given (a lower bound: a busy host only makes it longer); that it ended
    # at all is init.wait's deadline, and KILL its exit code
    assert time.monotonic() - sent >= 1.5


def test_job_control_signals_are_ignored_by_pid1(initd) -> None:
    init = initd(["--", *PRINT_SIGNALS, "--exit-on", "SIGTERM"])
    init.expect(r"^ready")
    for sig in (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU):
        init.signal(sig)
    # sent after them: passed on only by an initd they did not stop (a stopped one never
    # gets to it), so the look below comes after they were dealt with, not after a nap
    init.signal(signal.SIGUSR1)
    init.expect(rf"^{int(signal.SIGUSR1)}$")
    assert psutil.Process(init.init_pid).status() != psutil.STATUS_STOPPED
    init.signal(signal.SIGTERM)
    assert init.wait() == 0


@pytest.mark.parametrize("pidns", [True, False], ids=["pid1", "subreaper"])
def test_pipeline_leaves_no_process_behind(initd, pidns: bool) -> None:
    """dumb-init's `yes|tail & yes|tail` case: the whole group goes, not only the leader."""
    init = initd(["--", "sh", "-c", "yes | tail & yes | tail"], pidns=pidns)
    def pipeline() -> list[psutil.Process] | None:
        found = [p for p in init.descendants() if p.name() in ("yes", "tail")]
        return found if len(found) == 4 else None

    tree = wait_for(pipeline, what="the pipeline's four processes")
    init.signal(signal.SIGTERM)
    assert init.wait() == 128 + signal.SIGTERM
    assert not [p for p in tree if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def test_every_signal_is_passed_on_while_stopping(initd) -> None:
    """tini's semantics (DESIGN invariant 9): after the stop signal, a second TERM, USR1
    for log rotation, HUP or INT still reach CMD during the grace; only the first TERM
    armed the KILL, and CMD ends the stop itself (here on USR2) before it."""
    init = initd(["--grace", "20", "--", *PRINT_SIGNALS, "--exit-on", "SIGUSR2"])
    init.expect(r"^ready")
    for sig in (signal.SIGTERM, signal.SIGUSR1, signal.SIGHUP, signal.SIGINT,
                signal.SIGTERM):
        init.signal(sig)
        init.expect(rf"^{int(sig)}$")
    init.signal(signal.SIGUSR2)
    assert init.wait() == 0  # no KILL (that would be 137): CMD decided


RECORDS_SIGNALS = """
import signal, time
got, wanted = set(), {signal.SIGTERM, signal.SIGUSR2, signal.SIGUSR1}
for sig in (*wanted, signal.SIGCONT):
    signal.signal(sig, lambda n, _: got.add(n))
print("ready", flush=True)
while not wanted <= got:
    time.sleep(0.01)
print("got", *sorted(got), flush=True)
"""


def _pending(pid: int) -> set[int]:
    """The signals pending for ``pid`` (its own and its process's, from /proc)."""
    with open(f"/proc/{pid}/status") as f:
        masks = [int(line.split()[1], 16) for line in f
                 if line.startswith(("SigPnd:", "ShdPnd:"))]
    bits = masks[0] | masks[1]
    return {n for n in range(1, 65) if bits >> (n - 1) & 1}


def test_signals_that_come_with_the_stop_signal_are_passed_on_too(initd) -> None:
    """The stop signal and two more, read by the supervisor in one go: once the two were
    dropped (its loop went to the stop with the rest of what it had read). Stopped
    (SIGSTOP) while PID 1 passes them on, the supervisor gets all three at its SIGCONT;
    their handlers nest, so the highest number runs (and is read) first: TERM, then
    USR2 and USR1."""
    init = initd(["--grace", "30", "--", sys.executable, "-c", RECORDS_SIGNALS], pidns=False)
    init.expect(r"^ready$")
    supervisor = psutil.Process(init.init_pid).children()[0]
    sent = {signal.SIGTERM, signal.SIGUSR2, signal.SIGUSR1}
    supervisor.suspend()
    try:
        # stopped before they come (STOP is taken after lower-numbered signals already
        # pending: on a busy host it could handle them first, and none would stay pending)
        wait_for(lambda: supervisor.status() == psutil.STATUS_STOPPED,
                 what="the supervisor stopped")
        for sig in sorted(sent):
            init.signal(sig)
        wait_for(lambda: sent <= _pending(supervisor.pid), what="all three passed on")
    finally:
        supervisor.resume()
    got = init.expect(r"^got ([\d ]+)$", timeout=10)  # (one dropped: KILL after 30 s)
    assert {int(n) for n in got.group(1).split()} >= sent
    assert init.wait(timeout=10) == 0


@pytest.mark.slow
def test_int_is_passed_on_and_cmd_keeps_running(initd) -> None:
    """An agent that cancels its current task on Ctrl-C is not stopped for it."""
    init = initd(["--grace", "1", "--", *PRINT_SIGNALS, "--exit-on", "SIGTERM"])
    init.expect(r"^ready")
    init.signal(signal.SIGINT)
    init.expect(rf"^{int(signal.SIGINT)}$")
    time.sleep(1.5)  # past the grace a stop would have had
    init.signal(signal.SIGUSR1)
    init.expect(rf"^{int(signal.SIGUSR1)}$")  # still running
    init.signal(signal.SIGTERM)
    assert init.wait() == 0


@pytest.mark.slow
@pytest.mark.parametrize("spelling", ["INT", "SIGINT", "2"])
def test_stop_signal_option_makes_another_signal_the_stop(initd, spelling: str) -> None:
    init = initd(["-v", "--log-format", "json", "--stop-signal", spelling, "--grace", "1.5",
                  "--", *PRINT_SIGNALS, "--ignore", "SIGINT"])
    init.expect(r"^ready")
    init.signal(signal.SIGTERM)  # passed on, not a stop
    init.expect(rf"^{int(signal.SIGTERM)}$")
    sent = time.monotonic()
    init.signal(signal.SIGINT)  # ignored by CMD: KILL after the grace
    # KILL: INT armed a stop (passed on only, CMD would never end: init.wait's deadline)
    assert init.wait() == 128 + signal.SIGKILL
    # ...and TERM did not: the one stop initd logged is INT's
    stops = [e["signal"] for e in (json.loads(line) for line in init.stderr.splitlines()
                                   if line.startswith("{")) if e.get("event") == "agent stop"]
    assert stops == ["SIGINT"], init.stderr[-3000:]
    assert time.monotonic() - sent >= 1.5  # the grace was given (load only lengthens it)


@pytest.mark.parametrize("value", ["KILL", "STOP", "CHLD", "NOPE", "0", "99"])
def test_a_stop_signal_initd_cannot_forward_is_refused(initd, value: str) -> None:
    init = initd(["--stop-signal", value, "--", "true"])
    assert init.wait() == 125
    assert "--stop-signal" in init.stderr and "expected a signal initd forwards" in init.stderr
