"""The floor for any forked-Python supervisor, as a boot baseline: fork, parse argv with
argparse, run CMD with subprocess, exit with its code. No reaping, signals or settings."""

import argparse
import os
import sys

pid = os.fork()
if pid == 0:
    import subprocess

    parser = argparse.ArgumentParser()
    parser.add_argument("command", nargs=argparse.REMAINDER)
    command = parser.parse_args(sys.argv[1:]).command[1:]
    os._exit(subprocess.Popen(command, process_group=0).wait())
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
