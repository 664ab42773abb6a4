"""A hook's stdin in pieces (initd/process/feed.py, through process/runner.capture): the
pieces reach the hook whole and in order, taken as the pipe takes them (one at a time,
never all at once); a hook that stops reading lets the rest go (the pieces closed);
pieces that fail stop the hook's group, never leave it running; pieces of a hook that
never started are let go. Real processes, real pipes."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.process import feed, runner


def capture(argv: list[str], stdin: object, timeout: float = 30) -> runner.Captured:
    return runner.capture(argv, env=dict(os.environ), cwd="/", account=None,
                          timeout=timeout, stdin=stdin, grace=1.0)  # type: ignore[arg-type]


class Pieces:
    """``count`` pieces of ``size`` bytes, made as they are taken; it says how many were
    taken at most before the hook had read them, and whether it was closed."""

    def __init__(self, count: int, size: int, fail_at: int | None = None) -> None:
        self.count, self.size, self.fail_at = count, size, fail_at
        self.taken = 0
        self.closed = False
        self.sha = hashlib.sha256()

    def __iter__(self) -> Iterator[bytes]:
        try:
            for n in range(self.count):
                if n == self.fail_at:
                    raise OSError("the request's file failed")
                piece = bytes([n % 256]) * self.size
                self.sha.update(piece)
                self.taken += 1
                yield piece
        finally:
            self.closed = True


def test_pieces_reach_the_hook_whole_and_in_order() -> None:
    pieces = Pieces(300, 65536 + 7)  # ~19 MiB, far past a pipe's buffer
    got = capture(["sha256sum"], iter(pieces))
    assert got.exit_code == 0 and got.stdout.text().split()[0] == pieces.sha.hexdigest()
    assert pieces.closed and pieces.taken == 300


def test_a_hook_that_stops_reading_lets_the_rest_go() -> None:
    pieces = Pieces(10_000, 65536)  # 625 MiB it will never read
    got = capture(["head", "-c", "100"], iter(pieces))
    assert got.exit_code == 0 and len(bytes(got.stdout.head)) == 100
    assert pieces.closed and pieces.taken < 100  # taken as the pipe took them


def test_pieces_that_fail_stop_the_hook_and_say_so(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    pieces = Pieces(50, 65536, fail_at=20)
    with pytest.raises(OSError, match="the request's file failed"):
        capture(["sh", "-c", f"echo $$ > {pidfile}; cat >/dev/null; sleep 30"],
                iter(pieces))
    assert pieces.closed
    pid = int(pidfile.read_text())
    assert not Path(f"/proc/{pid}").exists()  # stopped and reaped, its group with it


def test_pieces_of_a_hook_that_never_started_are_let_go() -> None:
    pieces = Pieces(3, 10)
    source = iter(pieces)
    next(source)
    got = capture(["/nonexistent/hook"], source)
    assert got.exec_error is not None and pieces.closed


def test_bytes_are_still_a_stdin() -> None:
    got = capture(["cat"], b"plain bytes")
    assert bytes(got.stdout.head) == b"plain bytes"


def test_a_feed_writes_as_the_pipe_takes_and_lets_its_pieces_go() -> None:
    """process/feed.py itself: bytes or pieces, written as a non-blocking pipe takes
    them, one piece held at a time; a reader gone ends it; its pieces closed at the end."""
    closed: list[bool] = []

    def pieces() -> Iterator[bytes]:
        try:
            for n in range(64):
                yield bytes([n]) * 65536
        finally:
            closed.append(True)

    read, write = os.pipe2(os.O_NONBLOCK)
    got = bytearray()
    fed = feed.Feed(pieces())
    while fed.write(write) is not None:
        try:
            got += os.read(read, 1 << 20)
        except BlockingIOError:
            pass
    os.close(write)
    while chunk := os.read(read, 1 << 20):
        got += chunk
    os.close(read)
    assert bytes(got) == b"".join(bytes([n]) * 65536 for n in range(64)) and closed
    read, write = os.pipe2(os.O_NONBLOCK)
    os.close(read)  # (the hook stopped reading)
    gone = feed.Feed(b"x" * 100)
    assert gone.write(write) is None
    os.close(write)
    feed.discard(iter(()))  # (an iterator without close: nothing to do)
