"""supervisor/sigchan.py: the supervisor's signals as bytes on a pipe, and its ``stop``
flag, set by a signal handler in the same thread that reads and clears it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

CHILD = """
import signal, sys
from initd.supervisor.sigchan import SignalChannel
channel = SignalChannel({signal.SIGTERM, signal.SIGUSR1}, {signal.SIGTERM})
print("ready", flush=True)
for i in range(int(sys.argv[1])):
    channel.use_stop_signal(signal.SIGTERM if i % 2 else signal.SIGUSR1)
    channel.drain()
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGUSR1})
print("done", flush=True)
"""


def test_a_stop_signal_while_the_stop_signal_is_chosen_never_hangs_it() -> None:
    """The handler sets ``stop`` (taking its lock) in the thread that clears it in
    use_stop_signal: a signal landing inside that clear would wait on the thread's own
    lock for good, unless the signals are blocked meanwhile (so they are: that window
    is a few bytecodes wide, which no test can aim at). A stress check beside it:
    signals sent every 0.1 ms while it chooses 300,000 times; it must finish."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, "300000"], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout is not None
    assert child.stdout.readline() == "ready\n"
    deadline = time.monotonic() + 120
    sent = 0
    while child.poll() is None and time.monotonic() < deadline:
        for sig in (signal.SIGTERM, signal.SIGUSR1):
            try:
                os.kill(child.pid, sig)
            except ProcessLookupError:
                break
            sent += 1
        time.sleep(0.0001)  # (a flood would only test CPython's handlers, nested)
    if child.poll() is None:
        child.kill()
    assert child.wait() == 0 and child.stdout.read() == "done\n", f"hung after {sent} signals"
    assert sent > 100


def test_every_signal_is_on_the_pipe_in_order_and_a_stop_sets_the_flag() -> None:
    code = ("import os, signal\nfrom initd.supervisor.sigchan import SignalChannel\n"
            "c = SignalChannel({signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM}, "
            "{signal.SIGTERM})\n"
            "for sig in (signal.SIGUSR2, signal.SIGUSR1, signal.SIGTERM):\n"
            "    os.kill(os.getpid(), sig)\n"
            "print(c.drain(), c.stop.is_set(), c.stop_signal)\n"
            "c.use_stop_signal(signal.SIGUSR1)\n"
            "print(c.stop.is_set(), c.drain())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout.splitlines()
    assert out == [f"[{int(signal.SIGUSR2)}, {int(signal.SIGUSR1)}, {int(signal.SIGTERM)}] "
                   f"True {int(signal.SIGTERM)}",
                   "False []"]  # TERM is no longer the stop signal: not stopping
