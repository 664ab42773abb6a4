"""The floor of a forked Python supervisor that imports nothing for its common case: fork,
the command line read by hand (``[--] CMD ...``), CMD started with os.fork and os.execvp in
a process group of its own with every signal at its default, exit with CMD's code (with
``os._exit``, as initd's PID 1 exits). The alternative to argparse and subprocess that
bench/cpu.py sets beside initd and floor.py.

``--signal`` first: the same, with the ``signal`` module imported before the fork, as any
PID 1 must to take the signals it passes on (its enum is most of what ``signal`` costs).
``--public`` first: the floor of a Python init that uses no private module of CPython's
and starts its children as initd does: ``signal`` in PID 1, then ``typing`` (its
records) and ``subprocess`` in the supervisor, CMD started with ``subprocess.Popen``."""

import os
import sys

argv = sys.argv[1:]
mode = argv.pop(0) if argv[:1] in (["--signal"], ["--public"]) else ""
if mode:
    import signal  # noqa: F401 (what it costs is the point)
pid = os.fork()
if pid == 0:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if mode == "--public":
        import subprocess
        import typing  # noqa: F401

        os._exit(subprocess.Popen(command, process_group=0).wait())
    child = os.fork()
    if child == 0:
        os.setpgid(0, 0)
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    os._exit(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]))
os._exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
