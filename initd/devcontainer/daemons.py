"""What devcontainer.json's commands leave running (``nohup npm run dev &``): the sessions
they ran in, stopped with initd, and the output their daemons still write, read on in one
thread into each command's capped log. Once a log is full its pipe goes to a drain
(process/pipes.py): a daemon that writes forever costs root nothing more, and is never cut off
(a closed pipe would kill it with SIGPIPE)."""

from __future__ import annotations

import os
import threading
import time

from initd.hooks.context import HookContext
from initd.process import spawn
from initd.process.pipes import Stream

LINGER_CLOSE = 0.5  # seconds the output of stopped daemons is still read at the end


class Keeper:
    """The sessions the commands ran in (stopped at the end) and the output pipes their
    daemons still hold (read on, in one thread, into each command's capped log)."""

    def __init__(self, ctx: HookContext, uid: int) -> None:
        self.ctx = ctx
        self.uid = uid  # who the commands run as: only that user's processes are stopped
        self.sessions: list[int] = []  # the commands' session ids, from root's memory
        self.streams: list[Stream] = []
        self.lock = threading.Lock()
        self.wake_r, self.wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self.thread: threading.Thread | None = None
        self.closing = False

    def started(self, child: spawn.Child) -> None:
        with self.lock:
            self.sessions.append(child.pid)  # the leader of its own session: its id

    def linger(self, stream: Stream) -> None:
        with self.lock:
            self.streams.append(stream)
            if self.thread is None:
                self.thread = threading.Thread(target=self._read, name="devcontainer-output",
                                               daemon=True)
                try:
                    self.thread.start()
                except RuntimeError as err:  # a pids limit: its daemons get EPIPE
                    self.thread = None
                    self.ctx.log.warning("devcontainer: output of what a command left "
                                         "running is not read (cannot start a thread)",
                                         error=str(err))
                    self._end(stream, stop=True)
                    return
        self._wake()

    def _wake(self) -> None:
        try:
            os.write(self.wake_w, b".")
        except BlockingIOError:
            pass  # (woken already: the pipe is full of wake-ups)

    def _read(self) -> None:
        """Until ``stop``: read every pipe (or its drain), close each at its end; then
        LINGER_CLOSE more for what the stopped daemons last wrote, and close the rest (a
        daemon that left its session may hold one for good)."""
        until: float | None = None
        while True:
            with self.lock:
                streams = list(self.streams)
                if self.closing and until is None:
                    until = time.monotonic() + LINGER_CLOSE
                if until is not None and (not streams or time.monotonic() >= until):
                    for stream in streams:
                        self._end(stream, stop=True)
                    return
            wait = None if until is None else max(0.0, until - time.monotonic())
            polled = {stream.fileno(): stream for stream in streams}
            ready = spawn.wait_fds([self.wake_r, *polled], wait)
            if self.wake_r in ready:
                os.read(self.wake_r, 4096)
            for fd in (fd for fd in ready if fd in polled):
                try:
                    more = polled[fd].read()
                except OSError as err:  # never the thread: that pipe's reading ends
                    self.ctx.log.warning("devcontainer: a daemon's output is not read on",
                                         log=polled[fd].out.path, error=str(err))
                    more = False
                if not more:
                    with self.lock:
                        self._end(polled[fd], stop=False)

    def _end(self, stream: Stream, stop: bool) -> None:
        if stream in self.streams:
            self.streams.remove(stream)
        if stop:
            stream.close()
        stream.out.close()

    def stop(self, grace: float) -> int:
        """Stop every process left in the commands' sessions (TERM, ``grace``, KILL, all
        sessions at once). Returns how many there were."""
        counts: list[int] = []
        threads = []
        for sid in self.sessions:
            thread = threading.Thread(target=lambda s=sid: counts.append(
                spawn.stop_process_session(s, self.uid, grace)), name="devcontainer-stop",
                daemon=True)
            try:
                thread.start()
                threads.append(thread)
            except RuntimeError:
                counts.append(spawn.stop_process_session(sid, self.uid, grace))
        for thread in threads:
            thread.join()
        return sum(counts)

    def close(self) -> None:
        """Stop reading the daemons' output (what they last wrote: LINGER_CLOSE more)."""
        with self.lock:
            self.closing = True
        self._wake()
        if self.thread is not None:
            self.thread.join()  # (at most LINGER_CLOSE: it closes what is left)
