"""Every program a process's new children and threads start, and the uid each ran it as:
``strace -f -ff`` attached to a running process (root's supervisor, as the tests use it),
one file per process, read when the trace ends.

Each process's uid is followed from its parent's at its fork (``clone``, ``clone3``,
``fork``, ``vfork``) through its own ``setuid``, ``setreuid`` and ``setresuid``, so an
``execve`` is seen with the uid it really ran with: a process of uid 0 started for the
agent shows as uid 0, however short it lived (a look at the process table could miss
it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from typing import NamedTuple

TRACED = "execve,setuid,setreuid,setresuid,clone,clone3,fork,vfork"
# (a pid as its namespace numbers it, then as strace's does: the files' names)
FORK = re.compile(r"^(?:clone3?|v?fork)\(.*\)\s+= \d+ /\* (\d+) in strace's PID NS \*/$")
SETUID = re.compile(r"^set(re|res)?uid\((-?\d+)(?:, (-?\d+))?(?:, -?\d+)?\)\s+= 0$")
EXEC = re.compile(r'^execve\("([^"]*)", \[(.*)\], .*\)\s+= 0$')


class Exec(NamedTuple):
    pid: int
    uid: int
    argv: str  # as strace prints it: '"python3", "-I", …'


class ExecTrace:
    def __init__(self, pid: int, uid: int = 0) -> None:
        """Attached to ``pid`` (whose uid is ``uid``) and each of its threads, when this
        returns."""
        self.pid, self.uid = pid, uid
        self.dir = tempfile.mkdtemp(prefix="initd-exectrace-")
        self.proc = subprocess.Popen(
            ["strace", "-f", "-ff", "-qq", "--decode-pids=pidns", "-o",
             os.path.join(self.dir, "t"), "-e",
             f"trace={TRACED}", "-e", "signal=none", "-p", str(pid)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.threads = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
        deadline = time.monotonic() + 30
        while any(os.path.exists(f"/proc/{pid}/task/{tid}")
                  and not os.path.exists(os.path.join(self.dir, f"t.{tid}"))
                  for tid in self.threads):
            assert self.proc.poll() is None, f"strace: {self.proc.communicate()[1]!r}"
            assert time.monotonic() < deadline, "strace never attached"
            time.sleep(0.01)

    def stop(self) -> list[Exec]:
        """Detach; every ``execve`` that succeeded, with its uid."""
        self.proc.terminate()
        self.proc.wait(30)
        try:
            return self._read()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _read(self) -> list[Exec]:
        lines = {}
        for name in os.listdir(self.dir):
            with open(os.path.join(self.dir, name), errors="replace") as f:
                lines[int(name.rsplit(".", 1)[1])] = f.read().splitlines()
        found: list[Exec] = []
        start = dict.fromkeys(self.threads, self.uid)
        todo = list(start)
        while todo:
            pid = todo.pop()
            uid = start[pid]
            for line in lines.get(pid, ()):
                if (fork := FORK.match(line)) is not None:
                    start[int(fork[1])] = uid
                    todo.append(int(fork[1]))
                elif (changed := SETUID.match(line)) is not None:
                    effective = changed[3] if changed[1] else changed[2]  # (re, res: 2nd)
                    uid = uid if effective == "-1" else int(effective)
                elif (ran := EXEC.match(line)) is not None:
                    found.append(Exec(pid, uid, ran[2]))
        return found
