"""A JSON state file several processes change (initd/state/statefile.py, invariant 5):
read-modify-write under an flock, atomic writes; what is not ours read as empty (a link
or FIFO unlinked, a file of ours that is not our data kept aside as .corrupt); a lock
held for good waited for no longer than its deadline, or a stop's. Concurrent writers
and kill -9 mid-write: tests/hooks/status/test_store.py."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.config import paths
from initd.state import statefile
from initd.state.agentfs import Place, Unsafe
from initd.state.statefile import StateFile


def made(tmp_path: Path) -> StateFile:
    return StateFile(Place(str(tmp_path)), "s.json", lambda: {"empty": True})


def test_update_reads_cleans_changes_writes(tmp_path: Path) -> None:
    state = made(tmp_path)
    assert state.read() == {"empty": True}
    got = state.update(lambda d: d.update(n=d.get("n", 0) + 1),
                       clean=lambda d: {k: v for k, v in d.items() if k != "empty"})
    assert got == {"n": 1} and state.read() == {"n": 1}
    assert (tmp_path / "s.json").read_text() == '{"n": 1}\n'
    assert (tmp_path / ".s.json.lock").is_file()


@pytest.mark.parametrize("text", ["[1, 2]", "{", "null", "[" * 100_000 + "]" * 100_000])
def test_what_is_not_our_data_is_kept_aside_and_reads_as_empty(tmp_path: Path,
                                                               text: str) -> None:
    (tmp_path / "s.json").write_text(text)
    assert made(tmp_path).read() == {"empty": True}
    assert (tmp_path / "s.json.corrupt").read_text() == text


def test_a_link_a_fifo_or_a_huge_file_goes_never_its_target(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text('{"root": 1}')
    (tmp_path / "s.json").symlink_to(victim)
    assert made(tmp_path).read() == {"empty": True}
    assert not (tmp_path / "s.json").exists() and victim.read_text() == '{"root": 1}'
    os.mkfifo(tmp_path / "s.json")
    assert made(tmp_path).read() == {"empty": True}
    (tmp_path / "s.json").write_text(" " * (statefile.LIMIT + 1))
    assert made(tmp_path).read() == {"empty": True} and not (tmp_path / "s.json").exists()


@pytest.fixture
def held(tmp_path: Path) -> Iterator[int]:
    """The state file's lock, held by someone else (another descriptor: another flock)."""
    made(tmp_path).update(lambda d: None)
    fd = os.open(tmp_path / ".s.json.lock", os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield fd
    os.close(fd)


def test_a_lock_held_for_good_is_given_up_at_its_deadline(
        tmp_path: Path, held: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(statefile, "LOCK_WAIT", 0.05)
    with pytest.raises(Unsafe) as raised:
        made(tmp_path).update(lambda d: d.update(lost=True))
    assert "held by another process (for over 0.05s): not written" in str(raised.value)
    assert "lost" not in made(tmp_path).read()


def test_a_stop_cuts_the_wait_short(tmp_path: Path, held: int) -> None:
    """LOCK_WAIT is 10 s; the stop begins while the writer waits: it gives up within
    STOPPING_WAIT of it, saying why (an event, not a clock: the stop is set once the
    writer is waiting)."""
    errors: list[BaseException] = []

    def write() -> None:
        try:
            made(tmp_path).update(lambda d: None)
        except BaseException as err:
            errors.append(err)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        statefile.STOPPING.set()
        writer.join(60)
    finally:
        statefile.STOPPING.clear()
    assert not writer.is_alive() and "initd is stopping" in str(errors[0])


def test_where_the_state_lives() -> None:
    assert statefile.root("/home/a", None) == Place("/home/a", (paths.STATE,))
    assert statefile.root("/home/a", "/var/lib/initd").path == "/var/lib/initd"
    at = StateFile.at("/var/lib/initd/trust.json", dict)
    assert (at.place.path, at.name, at.path) == ("/var/lib/initd", "trust.json",
                                                 "/var/lib/initd/trust.json")
