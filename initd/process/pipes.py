"""A hook's output pipe, read by root in blocks into its Output (output.py); once the
log is full, handed to a drain, so that what a chatty process writes from then on costs
root nothing.

Up to the log's cap root copies the output into the log, a block per read; past it only
the last KEEP bytes still matter (the log's end, the message's tail). A drain is
``tail -c`` run as the user the command runs as, reading the pipe in root's place: the
bytes a daemon left by postStartCommand writes forever (``yes &``) are then that user's
work, and root reads the drain's last bytes once, when the pipe ends. The pipe is never
closed under a writer that is still meant to run: a daemon would die of SIGPIPE. Without
``tail`` (an image without coreutils or busybox), root reads on: only the tail moves.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import IO, Protocol

from initd.errors import InitdError
from initd.process import spawn
from initd.process.output import KEEP, Output
from initd.process.users import Account

BLOCK = 65536  # bytes per read: a pipe's whole default capacity
TAILS = ("/usr/bin/tail", "/bin/tail")  # root's own directories: never the agent's PATH
DRAIN_END = 1.0  # seconds a drain has to exit once its output has ended


class Reader(Protocol):
    """What the runner's pump polls: ``fileno``, ``read`` (False: done), ``close``."""

    def fileno(self) -> int: ...
    def read(self) -> bool: ...
    def close(self) -> None: ...


class Plain:
    """A pipe read into a callable (an event hook's stdout and stderr, kept apart)."""

    def __init__(self, pipe: IO[bytes], sink: Callable[[bytes], None]) -> None:
        self.pipe = pipe
        self.sink = sink

    def fileno(self) -> int:
        return self.pipe.fileno()

    def read(self) -> bool:
        chunk = os.read(self.pipe.fileno(), BLOCK)
        if chunk:
            self.sink(chunk)
        return bool(chunk)

    def close(self) -> None:
        self.pipe.close()


class Drain:
    """``tail -c KEEP+1`` reading a pipe in root's place; its output is what the pipe
    ended with. More than KEEP bytes from it means more went by than it kept."""

    def __init__(self, child: spawn.Child) -> None:
        assert child.popen.stdout is not None
        self.child = child
        self.out: IO[bytes] = child.popen.stdout
        self.got = bytearray()

    @classmethod
    def start(cls, fd: int, account: Account | None) -> Drain | None:
        """A drain on the pipe ``fd`` (root still holds its own copy: the caller closes
        it), in a session of its own; None when there is no ``tail`` or it cannot start."""
        tail = next((path for path in TAILS if os.access(path, os.X_OK)), None)
        if tail is None:
            return None
        try:
            child = spawn.spawn(spawn.Spec(
                argv=(tail, "-c", str(KEEP + 1)), env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
                cwd="/", account=account, stdin=fd, stdout=spawn.PIPE, stderr=spawn.DEVNULL,
                new_session=True))
        except (InitdError, OSError):
            return None
        return cls(child)

    def fileno(self) -> int:
        return self.out.fileno()

    def read(self) -> bool:
        """One read of its output; False once it has ended (or sent all root takes)."""
        chunk = os.read(self.out.fileno(), BLOCK)
        self.got += chunk
        return bool(chunk) and len(self.got) <= KEEP + 1

    def finish(self) -> tuple[bytes, bool] | None:
        """(what it sent, at most KEEP bytes; whether that is all it read), the drain
        ended (a well one exits at its output's end) and reaped; None when it did not
        end well (killed: by the agent, whose process it is): what it read is lost."""
        self.out.close()
        code = self.child.wait(DRAIN_END)
        if code is None:
            code = spawn.stop(self.child, signal.SIGTERM, DRAIN_END)
        if code != 0:
            return None
        return bytes(self.got[-KEEP:]), len(self.got) <= KEEP

    def abandon(self) -> None:
        """Stopped before its pipe ended (TERM, then KILL): what it had is lost."""
        self.out.close()
        spawn.stop(self.child, signal.SIGTERM, DRAIN_END)


class Stream:
    """A command's output pipe and its Output. ``drain``: hand the pipe to a drain once
    the log is full, as ``account`` (the command's user)."""

    def __init__(self, pipe: IO[bytes], out: Output, account: Account | None,
                 drain: bool = True) -> None:
        self.pipe: IO[bytes] | None = pipe
        self.out = out
        self.account = account
        self.may_drain = drain
        self.drain: Drain | None = None

    def fileno(self) -> int:
        if self.drain is not None:
            return self.drain.fileno()
        assert self.pipe is not None
        return self.pipe.fileno()

    def read(self) -> bool:
        """One read, into the log or the tail; False once the output has ended."""
        if self.drain is not None:
            if self.drain.read():
                return True
            end = self.drain.finish()
            if end is None:
                self.out.drain_lost("the process that read it in initd's place was killed")
            else:
                self.out.drained(*end)
            self.drain = None
            return False
        assert self.pipe is not None
        chunk = os.read(self.pipe.fileno(), BLOCK)
        if not chunk:
            self._close_pipe()
            return False
        self.out.add(chunk)
        if self.out.full and self.may_drain:
            self.may_drain = False
            self.drain = Drain.start(self.pipe.fileno(), self.account)
            if self.drain is not None:
                self._close_pipe()  # (the drain holds it now: no writer sees it close)
        return True

    def close(self) -> None:
        """Stop reading before the output ended: the pipe closed (a process left writing
        there gets EPIPE, as it would from a closed log), a drain stopped."""
        if self.drain is not None:
            self.drain.abandon()
            self.drain = None
            self.out.drain_lost("it was still being written when initd stopped reading")
        self._close_pipe()

    def _close_pipe(self) -> None:
        if self.pipe is not None:
            self.pipe.close()
            self.pipe = None
