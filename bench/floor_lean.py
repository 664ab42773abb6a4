"""The floor of a forked Python supervisor that imports nothing for its common case: fork,
the command line read by hand (``[--] CMD ...``), CMD started with os.fork and os.execvp in
a process group of its own with every signal at its default, exit with CMD's code. The
alternative to argparse and subprocess that bench/cpu.py sets beside initd and floor.py."""

import os
import sys

pid = os.fork()
if pid == 0:
    argv = sys.argv[1:]
    command = argv[1:] if argv[:1] == ["--"] else argv
    child = os.fork()
    if child == 0:
        os.setpgid(0, 0)
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    os._exit(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]))
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
