#!/usr/bin/env python3
"""Exit-status fidelity: run ``false`` N times through initd's own spawn and wait.

Default: inside ``reaper.run`` (the real two-tier layout: PID 1 reaps with waitpid(-1)
in its own process), while orphans keep PID 1's reaper busy. ``--same-process-reaper``
is the negative control: the same loop with a waitpid(-1) thread in the same process,
the bug ARCHITECTURE.md's invariant 1 exists to prevent (CPython then reports exit 0).
Prints ``runs=N false_successes=K``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time

from initd.pid1 import reaper
from initd.pid1 import signals as pid1signals
from initd.process import spawn
from initd.supervisor.sigchan import SignalChannel


def failing_runs(n: int) -> int:
    successes = 0
    for i in range(n):
        if i % 20 == 0:  # an orphan for somebody's waitpid(-1) to reap meanwhile
            spawn.spawn(spawn.Spec(argv=("sh", "-c", "sleep 0.01 &"), env=os.environ,
                                 cwd="/")).wait(None)
        child = spawn.spawn(spawn.Spec(argv=("false",), env=os.environ, cwd="/"))
        if child.wait(None) == 0:
            successes += 1
    return successes


def steal_forever() -> None:
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            time.sleep(0.0005)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("-n", type=int, default=1000)
    p.add_argument("--same-process-reaper", action="store_true")
    args = p.parse_args()

    def report(successes: int) -> int:
        print(f"runs={args.n} false_successes={successes}", flush=True)
        return 0

    if args.same_process_reaper:
        # Plain subprocess (what spawn wraps): with a thief in the process, spawn's pidfd
        # could not even be opened, the child being reaped before Popen returns.
        threading.Thread(target=steal_forever, daemon=True).start()
        return report(sum(subprocess.run(["false"]).returncode == 0 for _ in range(args.n)))

    def supervisor() -> int:
        SignalChannel(pid1signals.FORWARDED)  # as the real supervisor: handlers, then unblock
        return report(failing_runs(args.n))

    return reaper.run(supervisor)


if __name__ == "__main__":
    sys.exit(main())
