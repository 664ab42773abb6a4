"""process/pipes.py: a command's output pipe, read by root in blocks into its Output; once
the log is full, handed to a drain (``tail -c``, as the command's user, in a session of its
own) so that what a chatty process writes from then on costs root nothing. On real pipes,
real writers and a real ``tail``; the drain's user is one the tests made."""

from __future__ import annotations

import os
import pwd
import re
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from initd.process import pipes, procfs, spawn, users
from initd.process.output import KEEP, Output

CAP = 4096  # the log's cap in these tests
MORE = 2**20  # what the writer writes past the cap once told: far past KEEP

# Writes FIRST bytes of "a", waits for the gate file, then MORE bytes of "b" and an end.
WRITER = """
import os, sys, time
first, gate, more = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
out = sys.stdout.buffer
out.write(b"a" * first); out.flush()
while not os.path.exists(gate):
    time.sleep(0.01)
block = b"b" * 65536
while more > 0:
    out.write(block[:min(more, 65536)]); more -= 65536
out.write(b"THE-END"); out.flush()
"""


@pytest.fixture
def children() -> Iterator[list[spawn.Child]]:
    made: list[spawn.Child] = []
    yield made
    for child in made:
        if child.poll() is None:
            spawn.stop(child, signal.SIGKILL, 0)


def writer(children: list[spawn.Child], gate: Path, first: int,
           more: int = MORE) -> spawn.Child:
    child = spawn.spawn(spawn.Spec(argv=(sys.executable, "-c", WRITER, str(first), str(gate),
                                         str(more)), env={}, cwd="/", stdout=spawn.PIPE))
    children.append(child)
    return child


def output(tmp_path: Path) -> Output:
    return Output(open(tmp_path / "log", "wb"), str(tmp_path / "log"), CAP, None)


def pump(reader: pipes.Reader, until: Callable[[], bool] = lambda: False,
         timeout: float = 60) -> bool:
    """Read as the runner does until ``until()`` (True) or the output's end (False)."""
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, "the pipe never got there"
        if spawn.wait_fds([reader], 0.1) and not reader.read():
            return False
    return True


# --- Plain


def test_plain_hands_each_block_to_its_sink_until_the_end(
        children: list[spawn.Child], tmp_path: Path) -> None:
    (tmp_path / "gate").touch()
    child = writer(children, tmp_path / "gate", 100, more=300_000)
    assert child.popen.stdout is not None
    chunks: list[bytes] = []
    plain = pipes.Plain(child.popen.stdout, chunks.append)
    assert not pump(plain)
    plain.close()
    assert child.popen.stdout.closed
    assert b"".join(chunks) == b"a" * 100 + b"b" * 300_000 + b"THE-END"
    assert all(0 < len(chunk) <= pipes.BLOCK for chunk in chunks)
    assert child.wait(30) == 0


# --- Stream


def test_under_the_cap_root_reads_it_all_into_the_log(children: list[spawn.Child],
                                                      tmp_path: Path) -> None:
    (tmp_path / "gate").touch()
    child = writer(children, tmp_path / "gate", 1000, more=0)
    assert child.popen.stdout is not None
    out = output(tmp_path)
    stream = pipes.Stream(child.popen.stdout, out, None)
    assert not pump(stream)
    assert stream.drain is None and stream.pipe is None  # no drain; the pipe closed at its end
    out.close()
    assert (tmp_path / "log").read_bytes() == b"a" * 1000 + b"THE-END"
    assert child.wait(30) == 0


def test_past_the_cap_a_drain_as_the_commands_user_reads_in_roots_place(
        agent_user: pwd.struct_passwd, children: list[spawn.Child], tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    child = writer(children, gate, CAP + 100)
    assert child.popen.stdout is not None
    out = output(tmp_path)
    stream = pipes.Stream(child.popen.stdout, out, users.lookup(agent_user.pw_name))
    assert pump(stream, lambda: stream.drain is not None)
    drain = stream.drain
    assert drain is not None
    # root's copy of the pipe is closed: the drain holds it, as the agent, in a session
    # of its own, and the writer never sees its pipe close
    assert stream.pipe is None
    assert procfs.uids(drain.child.pid) == (agent_user.pw_uid,) * 4
    assert os.getsid(drain.child.pid) == drain.child.pid
    assert procfs.command(drain.child.pid) in [f"{tail} -c {KEEP + 1}" for tail in pipes.TAILS]
    gate.touch()  # a megabyte more, read by the drain, not by root
    assert not pump(stream)
    assert stream.drain is None
    assert child.wait(30) == 0  # never a SIGPIPE
    out.close()
    log = (tmp_path / "log").read_bytes()
    head, marker, end = log[:CAP], log[CAP:log.rindex(b"]\n") + 2], log[log.rindex(b"]\n") + 2:]
    assert head == b"a" * CAP
    said = re.fullmatch(rb"\n\[initd: output truncated at (\d+) bytes; at least (\d+) more "
                        rb"bytes dropped; its last (\d+) bytes follow\]\n", marker)
    assert said is not None, marker
    # what root read past the cap is what it knows was dropped: at least that, and no more
    # than there was (the drain's count is nobody's)
    assert (int(said[1]), int(said[3])) == (CAP, KEEP)
    assert 100 <= int(said[2]) <= 100 + MORE + 7 - KEEP
    assert end == (b"b" * MORE + b"THE-END")[-KEEP:]
    assert out.tail.endswith(b"THE-END") and len(out.tail) == KEEP


def test_a_drain_that_read_no_more_than_it_keeps_hands_over_all_of_it(
        children: list[spawn.Child], tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    child = writer(children, gate, CAP + 100, more=1000)
    assert child.popen.stdout is not None
    out = output(tmp_path)
    stream = pipes.Stream(child.popen.stdout, out, None)  # (as root: the command's user)
    assert pump(stream, lambda: stream.drain is not None)
    gate.touch()
    assert not pump(stream)
    out.close()
    assert out.size == CAP + 100 + 1000 + 7 and not out.uncounted  # every byte counted
    log = (tmp_path / "log").read_bytes()
    assert log.startswith(b"a" * CAP) and log.endswith(b"a" * 100 + b"b" * 1000 + b"THE-END")
    assert b"more bytes dropped" not in log


def test_a_drain_killed_loses_the_end_and_says_so(
        agent_user: pwd.struct_passwd, children: list[spawn.Child], tmp_path: Path) -> None:
    """The drain is the agent's process: the agent may kill it. What it read is lost,
    and the log says so; root reads nothing of it meanwhile."""
    child = writer(children, tmp_path / "gate", CAP + 100)
    assert child.popen.stdout is not None
    out = output(tmp_path)
    stream = pipes.Stream(child.popen.stdout, out, users.lookup(agent_user.pw_name))
    assert pump(stream, lambda: stream.drain is not None)
    assert stream.drain is not None
    os.kill(stream.drain.child.pid, signal.SIGKILL)
    assert not pump(stream)
    assert out.lost == "the process that read it in initd's place was killed"
    out.close()
    assert (tmp_path / "log").read_bytes().endswith(
        f"\n[initd: output truncated at {CAP} bytes; what followed is lost, its end too "
        "(the process that read it in initd's place was killed)]\n".encode())


def test_closed_before_the_end_the_drain_is_stopped(children: list[spawn.Child],
                                                    tmp_path: Path) -> None:
    """A timeout: root stops reading while the writer still writes. The drain is
    stopped (TERM, then KILL), and its end is lost, saying why."""
    child = writer(children, tmp_path / "gate", CAP + 100)
    assert child.popen.stdout is not None
    out = output(tmp_path)
    stream = pipes.Stream(child.popen.stdout, out, None)
    assert pump(stream, lambda: stream.drain is not None)
    assert stream.drain is not None
    drain = stream.drain.child
    stream.close()
    assert drain.poll() is not None and not drain.group_alive()
    assert stream.drain is None and stream.pipe is None
    assert out.lost == "it was still being written when initd stopped reading"


def test_without_a_drain_root_reads_on_and_only_the_tail_moves(
        children: list[spawn.Child], tmp_path: Path) -> None:
    (tmp_path / "gate").touch()
    child = writer(children, tmp_path / "gate", CAP + 100, more=200_000)
    assert child.popen.stdout is not None
    out = output(tmp_path)
    stream = pipes.Stream(child.popen.stdout, out, None, drain=False)
    assert not pump(stream, lambda: stream.drain is not None)
    assert out.written == CAP and out.size == CAP + 100 + 200_000 + 7
    assert bytes(out.tail).endswith(b"THE-END")


def test_no_tail_on_the_image_root_reads_on(children: list[spawn.Child], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """An image without coreutils or busybox: no drain, and the output still ends well.
    (TAILS is root's own list of places: an image without any.)"""
    monkeypatch.setattr(pipes, "TAILS", (str(tmp_path / "no-tail"),))
    (tmp_path / "gate").touch()
    child = writer(children, tmp_path / "gate", CAP + 100, more=200_000)
    assert child.popen.stdout is not None
    out = output(tmp_path)
    stream = pipes.Stream(child.popen.stdout, out, None)
    assert not pump(stream, lambda: stream.drain is not None)
    assert out.size == CAP + 100 + 200_000 + 7 and bytes(out.tail).endswith(b"THE-END")
    assert child.wait(30) == 0


def test_a_drain_gives_what_its_pipe_ended_with() -> None:
    """At most KEEP bytes, and whether that is all it read."""
    for sent, want in [(b"", (b"", True)), (b"x" * KEEP, (b"x" * KEEP, True)),
                       (b"y" + b"x" * KEEP, (b"x" * KEEP, False))]:
        read, write = os.pipe()
        drain = pipes.Drain.start(read, None)
        os.close(read)  # (the drain holds it now)
        assert drain is not None
        os.write(write, sent)
        os.close(write)
        assert not pump(drain)
        assert drain.finish() == want
