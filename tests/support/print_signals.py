#!/usr/bin/env python3
"""Announce ``ready (pid: N)``, then print the number of every signal received.

dumb-init's helper, so tests never sleep blindly. ``--exit-on SIG`` exits 0 on that
signal (a graceful agent); ``--ignore SIG`` ignores it (a stubborn one). Standard
library only: it also runs as a dropped user under /usr/bin/python3.
"""

import argparse
import os
import signal
import sys

UNCATCHABLE = {signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--exit-on", action="append", default=[])
    p.add_argument("--ignore", action="append", default=[])
    args = p.parse_args()
    exit_on = {signal.Signals[s].value for s in args.exit_on}
    ignored = {signal.Signals[s].value for s in args.ignore}

    def handler(signum: int, frame: object) -> None:
        print(signum, flush=True)
        if signum in exit_on:
            sys.exit(0)

    for sig in range(1, 32):
        if sig in UNCATCHABLE:
            continue
        signal.signal(sig, signal.SIG_IGN if sig in ignored else handler)
    print(f"ready (pid: {os.getpid()})", flush=True)
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
