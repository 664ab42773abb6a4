"""What an exited leader left in its process group, stopped off the supervisor's loop.

A process the agent starts may stay in the group of a child whose leader exits (for the
hook service: an event hook that joined its group, ignoring TERM). Stopping it takes up
to the grace; the supervisor's loop must not wait for that, or no signal is passed on
meanwhile (invariant 9). So a worker stops it (spawn.stop: TERM, grace, KILL), and a pipe
wakes the loop's poll when it is done.
"""

from __future__ import annotations

import os
import signal
import threading
import time

from initd.config.log import Logger
from initd.process import spawn

POLL = 0.05  # seconds between looks at Leftovers that have no pipe to wake the loop (EMFILE)


class Leftovers:
    """What an exited leader left in its group, being stopped by a worker (spawn.stop:
    TERM, ``grace``, KILL); ``done`` once it is. ``waitables`` turn readable then, to
    wake the loop's poll (none at the descriptor limit: ``timeout`` says to look again
    soon instead)."""

    def __init__(self, child: spawn.Child, returncode: int, grace: float, log: Logger) -> None:
        self.child = child
        self.code = spawn.exit_status(returncode)
        self.ran_for = time.monotonic() - child.started
        self.done = threading.Event()  # (set by the worker, polled by the loop)
        self._read = self._write = -1
        if not child.group_alive():  # (most exits: nothing left, no worker)
            self.done.set()
            return
        try:
            self._read, self._write = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:  # no descriptor (EMFILE): the loop looks every POLL s instead
            self._read = self._write = -1

        worker = threading.Thread(target=self._stop, args=(grace,), daemon=True,
                                  name=f"leftovers-{child.pid}")
        try:
            worker.start()
        except RuntimeError as err:  # no thread (a pids limit): here, bounded by the grace
            log.error("no thread to stop what the child left: stopping it in line",
                      pid=child.pid, error=str(err))
            self._stop(grace)

    def _stop(self, grace: float) -> None:
        try:
            spawn.stop(self.child, signal.SIGTERM, grace)
        finally:
            self.done.set()
            if self._write >= 0:  # (the worker's own end: closed here, never reused)
                try:
                    os.write(self._write, b"x")
                except OSError:  # the loop stopped waiting and closed its end
                    pass
                os.close(self._write)
                self._write = -1

    def waitables(self) -> list[Leftovers]:
        return [self] if self._read >= 0 else []

    def fileno(self) -> int:
        return self._read

    def timeout(self) -> float | None:
        return None if self._read >= 0 or self.done.is_set() else POLL

    def close(self) -> None:
        if self._read >= 0:
            os.close(self._read)
            self._read = -1
