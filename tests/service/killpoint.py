"""``python killpoint.py service ARGS…``: ``initd service ARGS…`` in this process, which
kills itself with SIGKILL (a real kill -9: no handler, no flush, no finally) at a write
the test chose. The point is named by the environment (read, then removed: the hooks the
service runs never see it):

    KILL_AT="ARM COUNT N[;ARM COUNT N…]"

Counting starts at the first time the service opens a file named by the regular
expression ARM for writing (a request's journal, ``journal.Journal.file_name``); from
then, the Nth opening for writing (with O_CREAT: once per append or atomic replacement)
of a file named by COUNT (the arming one included) is where it dies: before that file
is opened, after every write before it (of several plans, the first to reach its N).
``.`` counts every write: each step a request keeps (a journal line, a ledger line, a
state file's atomic replacement, a hook's log) is a point to die at. Only the service's
own opens count, not a hook's between fork and exec.

KILL_TRACE=1 prints each counted name on stderr (to see a request's steps).

This is the test's, not initd's: initd has no switch for it. Python's audit hooks see
every ``os.open`` and ``open`` (sys.addaudithook), in every thread.
"""

from __future__ import annotations

import os
import re
import signal
import sys


def install(spec: str, trace: bool) -> None:
    plans = []
    for plan in spec.split(";"):
        arm, count, n = plan.split(" ")
        plans.append({"arm": re.compile(arm), "count": re.compile(count), "nth": int(n),
                      "armed": False, "seen": 0})
    me = os.getpid()

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event != "open" or os.getpid() != me or len(args) < 3:
            return
        path, flags = args[0], args[2]
        if not isinstance(flags, int) or not flags & (os.O_WRONLY | os.O_RDWR) \
                or not flags & os.O_CREAT:
            return  # (open()'s own event has flags 0, its FileIO's the real ones; an
            # append tries O_CREAT|O_EXCL first, then opens again: once per write)
        if not isinstance(path, str | bytes):
            return
        name = os.path.basename(os.fsdecode(path))
        for plan in plans:
            if not plan["armed"] and plan["arm"].search(name):
                plan["armed"] = True
            if not plan["armed"] or not plan["count"].search(name):
                continue
            plan["seen"] += 1
            if trace:
                os.write(2, f"killpoint {plan['seen']}: {name}\n".encode())
            if plan["seen"] == plan["nth"]:
                os.kill(me, signal.SIGKILL)

    sys.addaudithook(hook)


def main() -> None:
    spec = os.environ.pop("KILL_AT", "")
    trace = os.environ.pop("KILL_TRACE", "") == "1"
    if spec:
        install(spec, trace)
    import initd.cli

    os.write(2, f"killpoint: initd from {os.path.dirname(initd.cli.__file__)}\n".encode())
    raise SystemExit(initd.cli.main(sys.argv[1:]))


if __name__ == "__main__":
    main()
