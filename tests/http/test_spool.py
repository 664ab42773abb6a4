"""Request bodies past SPOOL_AT in files (initd/http/spool.py), and the request that
carries one (wire.Arriving): written as they come, memory holding none of a body;
bounded (MAX_SPOOLED at once, given back when a body is closed); a body the spool could
not keep (no room, a link or a FIFO where its directory goes, a full disk) read to its
end all the same, then refused with a 503, never taken in part. Real files, a real full
tmpfs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.http import spool as spooling
from initd.http.spool import NO_ROOM, SPOOL_AT, Spool
from initd.http.wire import Arriving, Refused
from initd.state.agentfs import Place
from tests.support import tmpfs

HEAD = b"POST /v1/events/pre_tool HTTP/1.0\r\nContent-Length: %d\r\n\r\n"


def arrive(arriving: Arriving, spool: Spool, data: bytes, step: int = 65536) -> object:
    """Feed ``data`` as reads would; what ``whole`` says at the end."""
    got: object = None
    for at in range(0, len(data), step):
        arriving.data += data[at : at + step]
        got = arriving.whole(2**24, spool)
        assert len(arriving.data) <= step  # memory holds one read at most
    return got


def test_a_body_past_spool_at_is_kept_in_its_file(tmp_path: Path) -> None:
    spool = Spool(Place(str(tmp_path / "spool")))
    body = os.urandom(3 * SPOOL_AT + 5)
    head, kept = arrive(Arriving(), spool, HEAD % len(body) + body)  # type: ignore[misc]
    assert head[4] == len(body) and kept.size == len(body) and spool.used == len(body)
    assert kept.read(10) + kept.read() == body and kept.read() == b""
    assert os.listdir(tmp_path / "spool") == []  # no name leads to it
    kept.close()
    kept.close()  # (once)
    assert spool.used == 0


def test_a_body_at_spool_at_stays_in_memory(tmp_path: Path) -> None:
    spool = Spool(Place(str(tmp_path / "spool")))
    body = b"x" * SPOOL_AT
    _, kept = arrive(Arriving(), spool, HEAD % len(body) + body, 2 * SPOOL_AT)  # type: ignore[misc]
    assert kept == body and spool.used == 0 and not (tmp_path / "spool").exists()


def test_past_the_spools_room_a_body_is_read_to_its_end_then_refused(tmp_path: Path) -> None:
    spool = Spool(Place(str(tmp_path)), limit=4 * SPOOL_AT)
    first = spool.take(3 * SPOOL_AT)
    arriving = Arriving()
    body = b"y" * (2 * SPOOL_AT)
    data = HEAD % len(body) + body
    assert arrive(arriving, spool, data[:-1]) is None  # read on, kept nowhere
    arriving.data += data[-1:]
    with pytest.raises(Refused) as refused:
        arriving.whole(2**24, spool)
    assert refused.value.status == 503 and str(refused.value) == NO_ROOM
    first.close()
    assert spool.used == 0
    _, kept = arrive(Arriving(), spool, data)  # type: ignore[misc]
    assert kept.read() == body
    kept.close()


@pytest.mark.parametrize("planted", ["link", "fifo", "file"])
def test_what_is_planted_where_the_spool_goes_is_refused(tmp_path: Path,
                                                         planted: str) -> None:
    where, elsewhere = tmp_path / "spool", tmp_path / "elsewhere"
    elsewhere.mkdir()
    {"link": lambda: where.symlink_to(elsewhere), "fifo": lambda: os.mkfifo(where),
     "file": lambda: where.write_text("")}[planted]()
    spool = Spool(Place(str(tmp_path), ("spool",)))
    body = b"z" * (SPOOL_AT + 1)
    with pytest.raises(Refused) as refused:
        arrive(Arriving(), spool, HEAD % len(body) + body)
    assert refused.value.status == 503 and "could not be kept" in str(refused.value)
    assert os.listdir(elsewhere) == [] and spool.used == 0


@pytest.fixture
def full_disk() -> Iterator[Path]:
    """A tmpfs of 256 KiB."""
    if os.geteuid() != 0:
        pytest.skip("cannot run here: mounting a tmpfs needs root")
    with tmpfs.mounted("size=256k", "initd-spool-full-") as path:
        yield path


def test_a_full_disk_is_that_requests_503(full_disk: Path) -> None:
    spool = Spool(Place(str(full_disk)))
    body = b"w" * (1024 * 1024)
    arriving = Arriving()
    with pytest.raises(Refused) as refused:
        arrive(arriving, spool, HEAD % len(body) + body)
    assert refused.value.status == 503 and "No space left on device" in str(refused.value)
    assert spool.used == 0 and os.listdir(full_disk) == []
    small = b"v" * (SPOOL_AT + 1)  # the disk has room for it: taken
    _, kept = arrive(Arriving(), spool, HEAD % len(small) + small)  # type: ignore[misc]
    assert kept.read() == small
    kept.close()


def test_a_body_closed_lets_its_strings_be_encoded_again(tmp_path: Path) -> None:
    spool = Spool(Place(str(tmp_path)))
    body = spool.take(100)
    body.add(b'"' + b"a" * 98 + b'"')
    text = "a" * 98
    body.keep({id(text): (text, 0, 100)})
    place = spooling.opened(text)
    assert place is not None and os.pread(place[0], 3, 0) == b'"aa'
    os.close(place[0])
    assert spooling.opened("a" * 98) is None  # (another string, equal: not this one)
    body.close()
    assert spooling.opened(text) is None
