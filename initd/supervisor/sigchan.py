"""The supervisor's signals, as bytes on a pipe it polls with its children.

PID 1 hands the supervisor the forwarded signals blocked (pid1/reaper.run): we install handlers,
point CPython's wakeup fd at a pipe, and only then unblock, so nothing sent while the
supervisor was importing is lost or fatal.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable


class SignalChannel:
    def __init__(self, signals: Iterable[int], stop_signals: Iterable[int] = ()) -> None:
        self.read_fd, self._write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.signals = frozenset(signals)
        self.stop_signals = frozenset(stop_signals)
        # Set as soon as a stop signal arrives, for work that cannot poll the pipe
        # (boot's git calls and session hooks poll it); the pipe still gets the signal.
        self.stop = threading.Event()
        self.stop_signal = 0
        self._stopping = False  # (the handler's own mark: see _record)
        for sig in self.signals:
            signal.signal(sig, self._record)
        signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        # An empty mask: every child we spawn inherits it (invariant 2).
        signal.pthread_sigmask(signal.SIG_SETMASK, [])

    def use_stop_signal(self, sig: int) -> None:
        """The stop signal the settings name (read after this channel was made: a TERM
        that came meanwhile counts only if TERM is still the stop signal)."""
        # The handler sets ``stop``, taking its lock, in this thread: with the signals
        # blocked, it never runs while this thread holds that lock (it would wait forever)
        old = signal.pthread_sigmask(signal.SIG_BLOCK, self.signals)
        try:
            self.stop_signals = frozenset({sig})
            if self._stopping and self.stop_signal != sig:
                self.stop.clear()
                self.stop_signal = 0
                self._stopping = False
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def forward_to(self, send: Callable[[int], object]) -> None:
        """Pass every signal received since the last drain on with ``send`` (while
        stopping: a second TERM, USR1 for log rotation, INT to cancel a task)."""
        for sig in self.drain():
            send(sig)

    def fileno(self) -> int:
        return self.read_fd

    def drain(self) -> list[int]:
        """The signals received since the last drain, in arrival order."""
        received: list[int] = []
        while True:
            try:
                chunk = os.read(self.read_fd, 512)
            except BlockingIOError:
                return received
            received.extend(s for s in chunk if s in self.signals)

    def put_back(self, received: list[int]) -> None:
        """Signals drained but not passed on yet (those that came after a stop signal):
        the next drain returns them again."""
        if not received:
            return
        try:
            os.write(self._write_fd, bytes(received))
        except BlockingIOError:  # (a pipe full of signals: as CPython's own wakeup does)
            pass

    def _record(self, signum: int, frame: object) -> None:
        """CPython has written the signal number to the wakeup fd before calling this.

        A handler runs between two steps of whatever this thread was doing, this handler
        included: a second signal may run it again inside ``stop.set()``, which holds the
        Event's lock there. So a plain attribute is marked first, and the nested run
        returns at it: ``set`` is called once, and never waits on its own lock."""
        if signum in self.stop_signals and not self._stopping:
            self._stopping = True
            self.stop_signal = signum
            self.stop.set()
