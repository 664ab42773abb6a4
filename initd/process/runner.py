"""Run one hook: its own group, stdin, a streamed and capped log, a timeout by group.

stdout and stderr share one pipe, so the log keeps their arrival order. Memory holds only
a head and a tail for messages (invariant 6); the log file is capped with a marker, and
past the cap the pipe goes to a drain (pipes.py): root reads no more of it. The runner
never waits for a pipe: once the hook's leader has exited (or been stopped) it drains for
at most DRAIN seconds, so a daemon the hook left holding stdout cannot keep it, and at
the timeout it stops the whole group (TERM, grace, KILL) and returns.
"""

from __future__ import annotations

import fcntl
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import BinaryIO, NamedTuple, Protocol

from initd.errors import InitdError
from initd.process import spawn
from initd.process.feed import Feed, Stdin, discard
from initd.process.limits import NONE as NO_LIMITS
from initd.process.limits import Limits, killed_by
from initd.process.output import KEEP, Kept, Output
from initd.process.pipes import Plain, Reader, Stream
from initd.process.users import Account

LOG_CAP = 10 * 2**20
DRAIN = 0.5  # seconds to keep reading after the leader has gone
# A hook still running this long after it started is marked running (``on_running``: a
# durable write in status.json, for the recovery of a crash); one that is done by then
# has only its result written: two fsynced writes per trivial hook would be most of its
# cost, and a mark nobody could see is worth nothing.
RUNNING_MARK_AFTER = 0.05


class Keeper(Protocol):
    """Who keeps what a command leaves running (a dev container's daemons: devcontainer/daemons.py):
    told of the command's session when it starts, and given its output (the pipe, or
    its drain), still held open by them, once the command itself has exited."""

    def started(self, child: spawn.Child) -> None: ...
    def linger(self, stream: Stream) -> None: ...


class Result(NamedTuple):
    exit_code: int  # shell-style: N, 128+S, 126/127 exec failure, 124 timeout
    signal: int | None  # the signal that ended it, if one did
    timed_out: bool
    cancelled: bool
    duration: float
    output_path: str
    truncated: bool
    exec_error: str | None
    head: bytes
    tail: bytes  # empty when the whole output fits in head
    lines: int
    refused: bool = False  # initd would not run it (not trusted; a root hook changed)
    log_error: str | None = None  # why its log file stopped being written (a full disk)
    limit: str | None = None  # the limit that killed it ("its cpu limit (10 s of CPU)")

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.cancelled

    def output(self) -> str:
        """What the hook printed, from memory (head, a marker, tail when it was long)."""
        if not self.tail:
            return self.head.decode(errors="replace")
        return (self.head.decode(errors="replace") + "\n[… output elided, see "
                f"{self.output_path} …]\n" + self.tail.decode(errors="replace"))


def to_wire(result: Result) -> dict[str, object]:
    """A Result as JSON can carry it (over the supervisor's private channel)."""
    import base64

    fields: dict[str, object] = result._asdict()
    fields["head"] = base64.b64encode(result.head).decode()
    fields["tail"] = base64.b64encode(result.tail).decode()
    return fields


def from_wire(fields: dict[str, object]) -> Result:
    import base64

    data = {name: fields[name] for name in Result._fields}
    data["head"] = base64.b64decode(str(data["head"]))
    data["tail"] = base64.b64decode(str(data["tail"]))
    return Result(**data)  # type: ignore[arg-type]


def run(path: str, *, env: Mapping[str, str], cwd: str, account: Account | None,
        timeout: float, log: BinaryIO | OSError, log_path: str, stdin: Stdin = None,
        grace: float = 5.0, cap: int = LOG_CAP,
        on_line: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
        on_running: Callable[[spawn.Child], None] | None = None,
        limits: Limits = NO_LIMITS, argv: Sequence[str] | None = None,
        keeper: Keeper | None = None) -> Result:
    """Run the hook at ``path`` (or ``argv``, a command), its output to ``log`` (open,
    new: StatusStore.new_log; closed here; or why it could not be made, and then memory
    alone keeps it); never raises for anything the hook does. ``on_running`` is told
    about the child once it has run for RUNNING_MARK_AFTER seconds, and never if it ends
    sooner. With a ``keeper`` it runs in a session of its own, the keeper is told about
    it at once, and the output of what it leaves running is the keeper's to read."""
    started = time.monotonic()
    out = Output(log, log_path, cap, on_line)
    try:
        child = spawn.spawn(spawn.Spec(
            argv=tuple(argv) if argv else (path,), env=env, cwd=cwd, account=account,
            stdin=spawn.DEVNULL if stdin is None else spawn.PIPE,
            stdout=spawn.PIPE, stderr=spawn.STDOUT, limits=limits,
            new_session=keeper is not None))
    except InitdError as err:  # not found 127, not executable 126; no working directory 126
        discard(stdin)
        out.note(f"[initd: {err}]\n")
        out.close()
        code = err.exit_code if isinstance(err, spawn.ExecFailed) else 126
        return _result(code, None, False, False, started, out, str(err))
    assert child.popen.stdout is not None
    if keeper is not None:
        keeper.started(child)
    mark = None if on_running is None else (started + RUNNING_MARK_AFTER, on_running)
    held: list[Reader] | None = [] if keeper is not None else None
    stream = Stream(child.popen.stdout, out, account)
    timed_out, cancelled = _watched(child, stdin, [stream], started + timeout, grace,
                                    cancel, mark, held)
    returncode = child.poll()
    assert returncode is not None
    if timed_out:
        out.note(f"\n[initd: timed out after {timeout:g}s; the hook's process group was "
                 "stopped]\n")
    if cancelled:
        out.note("\n[initd: cancelled; the hook's process group was stopped]\n")
    sig = -returncode if returncode < 0 else None
    limit = None if timed_out or cancelled else killed_by(returncode, limits)
    if limit is not None:
        out.note(f"\n[initd: killed by {limit}]\n")
    code = 124 if timed_out else spawn.exit_status(returncode)
    result = _result(code, sig, timed_out, cancelled, started, out, None)._replace(limit=limit)
    if held and keeper is not None:  # what it started still writes there: read on
        keeper.linger(stream)
    else:
        out.close()
    return result


def refused(log: BinaryIO | OSError, log_path: str, reason: str) -> Result:
    """A hook initd would not run: a failed result (126, like a command that cannot be
    executed) whose log says why."""
    started = time.monotonic()
    out = Output(log, log_path, LOG_CAP, None)
    out.add(f"[initd: {reason}]\n".encode())
    out.close()
    return _result(126, None, False, False, started, out, reason)._replace(refused=True)


def _watched(child: spawn.Child, stdin: Stdin, streams: Sequence[Reader],
             deadline: float, grace: float, cancel: threading.Event | None,
             mark: tuple[float, Callable[[spawn.Child], None]] | None = None,
             held: list[Reader] | None = None) -> tuple[bool, bool]:
    """``_pump``; what it raises (a stdin's file that failed) stops the group first."""
    try:
        return _pump(child, stdin, streams, deadline, grace, cancel, mark, held)
    except BaseException:
        spawn.stop(child, signal.SIGTERM, grace)
        raise


def _pump(child: spawn.Child, stdin: Stdin, streams: Sequence[Reader],
          deadline: float, grace: float, cancel: threading.Event | None,
          mark: tuple[float, Callable[[spawn.Child], None]] | None = None,
          held: list[Reader] | None = None) -> tuple[bool, bool]:
    """Read each pipe until the hook is done; stop its group at the deadline or on
    cancel; ``mark`` (when, what) is told about the child at that time if it is still
    running. Never waits for a pipe: once the leader is gone, at most DRAIN seconds
    more. With ``held``, a pipe still open then (a daemon the hook left holds it) is not
    closed but listed there."""
    readers = list(streams)
    writer = _nonblocking(child.popen.stdin.fileno()) if child.popen.stdin else None
    feed = Feed(stdin)
    if writer is not None and not feed.pending:
        _close_quietly(child)
        writer = None
    timed_out = cancelled = False
    drain_until: float | None = None
    while True:
        now = time.monotonic()
        exited = child.poll() is not None
        if exited and drain_until is None:
            drain_until = now + DRAIN
        if drain_until is not None and (not readers or now >= drain_until):
            break
        if not exited and (now >= deadline or (cancel is not None and cancel.is_set())):
            timed_out, cancelled = now >= deadline, now < deadline
            spawn.stop(child, signal.SIGTERM, grace)  # output waits; the group is going
            continue
        if mark is not None and (exited or now >= mark[0]):
            if not exited:
                _tell(mark[1], child, grace)
            mark = None
        wait = max(0.0, (drain_until if drain_until is not None else deadline) - now)
        if cancel is not None:
            wait = min(wait, 0.1)
        if mark is not None:
            wait = min(wait, max(0.0, mark[0] - now))
        polled = {reader.fileno(): reader for reader in readers}
        waits = [*polled, *([child.pidfd] if child.pidfd >= 0 else [])]
        ready = spawn.wait_fds(waits, wait, writer)
        if writer is not None and writer in ready:
            writer = feed.write(writer)
            if writer is None:
                _close_quietly(child)
        for fd in ready:
            if fd in polled and not polled[fd].read():
                readers.remove(polled[fd])  # its end; the leader may still be running
    if writer is not None:
        _close_quietly(child)
    feed.close()
    for reader in readers:
        if held is not None:
            held.append(reader)  # the caller's to read on
        else:
            reader.close()  # a leftover daemon still writing gets EPIPE, not us stuck
    return timed_out, cancelled


class Captured(NamedTuple):
    """An event hook's process: its streams apart, and how it ended."""

    stdout: Kept
    stderr: Kept
    exit_code: int | None  # N, or 128+S; None when it could not start
    timed_out: bool
    cancelled: bool
    duration: float
    exec_error: str | None  # it could not be started (not found, not executable, no cwd)
    limit: str | None = None  # the limit that killed it


def capture(argv: Sequence[str], *, env: Mapping[str, str], cwd: str,
            account: Account | None, timeout: float, stdin: Stdin = None,
            grace: float = 5.0, cancel: threading.Event | None = None,
            limits: Limits = NO_LIMITS, stdout_head: int = KEEP,
            new_session: bool = False, pass_fds: tuple[int, ...] = ()) -> Captured:
    """Run ``argv`` in its own group (``new_session``: a session of its own, without a
    controlling terminal) with stdout and stderr kept apart (bounded: stdout's first
    ``stdout_head`` bytes, an event hook's answer), and ``pass_fds`` open in it; the
    timeout or a cancel stops the whole group. Never raises for what the command does."""
    started = time.monotonic()
    out, err = Kept(stdout_head), Kept()
    try:
        child = spawn.spawn(spawn.Spec(
            argv=tuple(argv), env=env, cwd=cwd, account=account,
            stdin=spawn.DEVNULL if stdin is None else spawn.PIPE,
            stdout=spawn.PIPE, stderr=spawn.PIPE, limits=limits, new_session=new_session,
            pass_fds=pass_fds))
    except InitdError as error:
        discard(stdin)
        return Captured(out, err, None, False, False, time.monotonic() - started, str(error))
    assert child.popen.stdout is not None and child.popen.stderr is not None
    timed_out, cancelled = _watched(child, stdin, [Plain(child.popen.stdout, out.add),
                                                   Plain(child.popen.stderr, err.add)],
                                    started + timeout, grace, cancel)
    returncode = child.poll()
    assert returncode is not None
    limit = None if timed_out or cancelled else killed_by(returncode, limits)
    return Captured(out, err, None if timed_out else spawn.exit_status(returncode), timed_out,
                    cancelled, time.monotonic() - started, None, limit)


def _tell(on_running: Callable[[spawn.Child], None], child: spawn.Child, grace: float) -> None:
    try:
        on_running(child)
    except BaseException:
        spawn.stop(child, signal.SIGTERM, grace)  # never a hook left unsupervised
        raise


def _close_quietly(child: spawn.Child) -> None:
    try:
        child.popen.stdin.close()  # type: ignore[union-attr]
    except BrokenPipeError:
        pass  # the hook is gone or closed its stdin: nothing left to deliver


def _nonblocking(fd: int) -> int:
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    return fd


def _result(code: int, sig: int | None, timed_out: bool, cancelled: bool, started: float,
            out: Output, exec_error: str | None) -> Result:
    return Result(exit_code=code, signal=sig, timed_out=timed_out, cancelled=cancelled,
                  duration=time.monotonic() - started, output_path=out.path,
                  truncated=out.dropped > 0, exec_error=exec_error, head=bytes(out.head),
                  tail=bytes(out.tail), lines=out.lines, log_error=out.failed)
