"""process/channel.py: root's private channel to the hook service, a socketpair, one JSON
object a line. Root's end reads what the agent's process sends: anything that is not a
message of ours is a ProtocolError naming it in a few words, never the data, and never
a line held past its limit."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from initd.process.channel import MAX_REQUEST, Channel, ProtocolError


@pytest.fixture
def ends() -> tuple[Channel, socket.socket]:
    root, fd = Channel.pair()
    theirs = socket.socket(fileno=fd)
    yield root, theirs
    root.close()
    theirs.close()


def test_messages_cross_whole_in_order_however_they_are_cut(
        ends: tuple[Channel, socket.socket]) -> None:
    root, theirs = ends
    service = Channel(theirs)
    assert service.send({"op": "ready"}) and service.send({"op": "trust", "id": 2, "key": "é"})
    got: list[dict[str, object]] = []
    while len(got) < 2:
        got += root.receive(7) or []  # (seven bytes a read: each line cut in pieces)
    assert got == [{"op": "ready"}, {"op": "trust", "id": 2, "key": "é"}]


@pytest.mark.parametrize(("sent", "said"), [
    (b"not json\n", "a line that is not JSON"),
    (b"[1, 2]\n", "JSON that is not an object"),
    (b"[" * 10_000 + b"\n", "JSON nested too deep"),  # (under MAX_REQUEST)
    (b"{\"op\": \"" + b"x" * MAX_REQUEST + b"\"}\n", "a line of"),
])
def test_what_is_no_message_of_ours_is_named_never_echoed(
        ends: tuple[Channel, socket.socket], sent: bytes, said: str) -> None:
    root, theirs = ends
    theirs.sendall(sent)
    with pytest.raises(ProtocolError, match=said) as raised:
        while root.receive() == []:
            pass
    assert len(str(raised.value)) < 60  # (a few words, not the agent's bytes)


def test_a_line_without_its_end_is_not_held_past_the_limit(
        ends: tuple[Channel, socket.socket]) -> None:
    root, theirs = ends
    theirs.setblocking(False)
    with pytest.raises(ProtocolError, match="a line of over"):
        for _ in range(64):  # (more than the limit, sent as room comes, never a newline)
            try:
                theirs.send(b"x" * 8192)
            except BlockingIOError:
                pass
            root.receive()
    assert len(root._buffer) <= MAX_REQUEST + 65536


def test_the_peer_gone_is_none_and_a_send_to_it_false(ends: tuple[Channel, socket.socket]
                                                       ) -> None:
    root, theirs = ends
    theirs.close()
    assert root.receive() is None
    assert root.send({"op": "state"}, wait=1.0) is False  # (the caller carries on)


def test_a_send_to_a_peer_that_never_reads_gives_up_at_its_wait(
        ends: tuple[Channel, socket.socket]) -> None:
    """Root never blocks on the agent's service: a full socket and no reader, and the send
    ends (False), the channel closed (the stream would be cut mid-line)."""
    root, _theirs = ends
    big = {"result": "x" * 2**20}
    assert not all(root.send(big, wait=0.2) for _ in range(64))
    assert root.closed


def test_the_childs_end_crosses_an_exec_at_its_number() -> None:
    root, fd = Channel.pair()
    code = ("import sys; from initd.process.channel import Channel\n"
            "Channel.from_fd(int(sys.argv[1])).send({'op': 'ready', 'pid': 1})")
    subprocess.run([sys.executable, "-c", code, str(fd)], pass_fds=(fd,), check=True,
                   timeout=60)
    os.close(fd)
    got: list[dict[str, object]] = []
    while not got:
        got = root.receive() or []
    assert got == [{"op": "ready", "pid": 1}]
    root.close()


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=4096))
def test_any_bytes_are_messages_or_a_protocol_error(data: bytes) -> None:
    root, fd = Channel.pair()
    theirs = socket.socket(fileno=fd)
    try:
        theirs.sendall(data + b"\n")
        try:
            for message in root.receive() or []:
                assert isinstance(message, dict)
        except ProtocolError:
            pass
    finally:
        root.close()
        theirs.close()
