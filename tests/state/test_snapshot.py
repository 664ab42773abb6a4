"""state/snapshot.py: a read kept is the same read replayed (its bytes, its status, its
error, of the same type), within a budget, in a memory file sealed for good; whatever is
not a snapshot of ours reads as a failed one, never as an empty one."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from initd.state import snapshot
from initd.state.agentfs import Unsafe, read_regular
from initd.state.snapshot import Snapshot


def taken(*paths: Path, limit: int = 1024, whole: bool = True) -> Snapshot:
    made = Snapshot()
    for path in paths:
        made.record_read(str(path), limit, whole, read_regular)
    return Snapshot.decode(made.encode())


def test_a_file_replays_its_bytes_and_status(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b'{"hooks": {}}\n\xff')
    replayed = taken(path)
    data, info = replayed.read(str(path), 1024, True)
    assert data == path.read_bytes()
    live = path.stat()
    assert (info.st_mode, info.st_size, info.st_ino, info.st_mtime_ns, info.st_uid) == \
        (live.st_mode, live.st_size, live.st_ino, live.st_mtime_ns, live.st_uid)
    assert replayed.stamp(str(path)) == (live.st_mtime_ns, live.st_size, live.st_ino)


def test_errors_replay_as_the_same_type_and_words(tmp_path: Path) -> None:
    missing, fifo, big = tmp_path / "missing", tmp_path / "fifo", tmp_path / "big"
    os.mkfifo(fifo)
    big.write_bytes(b"x" * 2000)
    replayed = taken(missing, fifo, big)
    with pytest.raises(FileNotFoundError):
        replayed.read(str(missing), 1024, True)
    for path in (fifo, big):
        with pytest.raises(Unsafe) as live:
            read_regular(str(path), 1024, whole=True)
        with pytest.raises(Unsafe) as again:
            replayed.read(str(path), 1024, True)
        assert (again.value.errno, str(again.value)) == (live.value.errno, str(live.value))
    assert replayed.stamp(str(missing)) is None


def test_a_path_never_read_but_covered_is_not_there(tmp_path: Path) -> None:
    replayed = Snapshot((str(tmp_path / "a"),))
    assert replayed.covers(str(tmp_path / "a")) and not replayed.covers(str(tmp_path / "b"))
    with pytest.raises(FileNotFoundError):
        replayed.read(str(tmp_path / "a"), 10, True)


def test_a_read_with_other_limits_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("x")
    with pytest.raises(Unsafe, match="not read as the guard snapshot read it"):
        taken(path).read(str(path), 2048, True)


def test_past_the_budget_a_read_is_an_error_no_loader_takes_for_a_non_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "BUDGET", 2500)
    paths = []
    for n in range(3):
        paths.append(tmp_path / f"{n}")
        paths[-1].write_bytes(b"y" * 900)
    replayed = taken(*paths)
    replayed.read(str(paths[0]), 1024, True)
    replayed.read(str(paths[1]), 1024, True)
    with pytest.raises(OSError) as err:  # (0, 1: 1800 kept; 2: 1800 + its limit > 2500)
        replayed.read(str(paths[2]), 1024, True)
    assert not isinstance(err.value, Unsafe) and err.value.errno == errno.EFBIG
    assert "holds at most 2500 bytes" in str(err.value)


def test_listings_replay_and_their_errors_too(tmp_path: Path) -> None:
    made = Snapshot()
    made.record_names(str(tmp_path), lambda d: (["a", "b"], 7))
    made.record_names(str(tmp_path / "x"), lambda d: os.listdir(d))  # type: ignore[arg-type,return-value]
    replayed = Snapshot.decode(made.encode())
    assert replayed.names(str(tmp_path)) == (["a", "b"], 7)
    with pytest.raises(FileNotFoundError):
        replayed.names(str(tmp_path / "x"))


@pytest.mark.parametrize("raw", [b"", b"not json", b"[]", b'{"version": 99}',
                                 b'{"version": 1, "covered": 3}', b"[" * 100_000])
def test_what_is_no_snapshot_of_ours_is_a_failed_one(raw: bytes) -> None:
    got = Snapshot.decode(raw)
    assert got.failed is not None and "unreadable" in got.failed


def test_a_failed_snapshot_reads_every_path_it_covers_as_its_failure(tmp_path: Path) -> None:
    failed = Snapshot((str(tmp_path / "settings.json"),), failed="the reader timed out")
    with pytest.raises(Unsafe, match="the reader timed out"):
        failed.read(str(tmp_path / "settings.json"), 10, True)


def test_the_memory_file_is_sealed_and_read_from_its_start(tmp_path: Path) -> None:
    made = Snapshot()
    path = tmp_path / "f"
    path.write_text("kept")
    made.record_read(str(path), 100, True, read_regular)
    fd = snapshot.made(made.encode())
    try:
        os.lseek(fd, 0, os.SEEK_END)  # (someone else's offset: load reads from the start)
        assert snapshot.load(fd).read(str(path), 100, True)[0] == b"kept"
        with pytest.raises(PermissionError):
            os.write(fd, b"x")
        with pytest.raises(PermissionError):
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)


def test_an_unsealed_memory_file_is_a_failed_snapshot() -> None:
    fd = snapshot.memory_file()
    try:
        snapshot.write(fd, Snapshot().encode())
        assert snapshot.load(fd).failed == "the guard snapshot was not sealed"
    finally:
        os.close(fd)
