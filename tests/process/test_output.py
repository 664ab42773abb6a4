"""process/output.py: what memory keeps of a command's output (a head and a tail, KEEP
bytes each) and its capped log file (the output up to the cap, a marker, its last KEEP
bytes), chunk by chunk, whatever the chunks' sizes. Real files in tmp_path; /dev/full for
a disk that is full."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from initd.process.output import ECHO, KEEP, LINE_MAX, Kept, Output


def fed(kept: Kept, data: bytes, sizes: list[int]) -> Kept:
    at = 0
    for size in sizes:
        kept.add(data[at:at + size])
        at += size
    kept.add(data[at:])
    return kept


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3 * KEEP), st.lists(st.integers(0, KEEP + 10), max_size=8))
def test_memory_keeps_the_head_and_the_tail_of_any_stream(data: bytes, sizes: list[int]
                                                           ) -> None:
    kept = fed(Kept(), data, sizes)
    assert (kept.size, kept.lines) == (len(data), data.count(b"\n"))
    assert bytes(kept.head) == data[:KEEP]
    assert len(kept.head) + len(kept.tail) <= 2 * KEEP  # (invariant 6)
    assert kept.elided == (len(data) > 2 * KEEP)
    assert kept.last(100) == data[-100:] if data else kept.last(100) == b""
    assert kept.last(KEEP) == data[-KEEP:]
    if not kept.elided:
        assert bytes(kept.head + kept.tail) == data


def test_the_text_says_where_the_middle_went() -> None:
    data = b"a" * KEEP + b"b" * 10 + b"c" * KEEP
    assert Kept().text() == ""
    text = fed(Kept(), data, []).text("the log")
    assert text == "a" * KEEP + "\n[… output elided, see the log …]\n" + "c" * KEEP


def test_the_log_holds_the_beginning_a_marker_and_the_end(tmp_path: Path) -> None:
    path = tmp_path / "hook.log"
    data = bytes(range(256)) * 1000  # 256,000 bytes
    out = Output(path.open("wb"), str(path), cap=10_000, on_line=None)
    fed(out, data, [1, 4095, 9000, 70_000])
    assert out.full and out.dropped == len(data) - 10_000
    out.close()
    log = path.read_bytes()
    marker = (f"\n[initd: output truncated at 10000 bytes; {len(data) - 10_000 - KEEP} more "
              f"bytes dropped; its last {KEEP} bytes follow]\n").encode()
    assert log == data[:10_000] + marker + data[-KEEP:]


def test_a_log_under_its_cap_is_the_output_and_a_remark(tmp_path: Path) -> None:
    path = tmp_path / "hook.log"
    out = Output(path.open("wb"), str(path), cap=10_000, on_line=None)
    out.add(b"hello\n")
    out.note("[initd: timed out after 5s]\n")
    out.close()
    assert path.read_bytes() == b"hello\n[initd: timed out after 5s]\n"


def test_a_full_disk_stops_the_log_never_the_output_in_memory() -> None:
    out = Output(open("/dev/full", "wb", buffering=0), "/dev/full", cap=10**6,  # noqa: SIM115
                 on_line=None)
    out.add(b"x" * 100)
    out.add(b"y" * 100)
    out.close()
    assert out.failed and "space" in out.failed.lower()
    assert out.size == 200 and bytes(out.head) == b"x" * 100 + b"y" * 100


def test_a_log_that_could_not_be_made_keeps_memory_only() -> None:
    out = Output(OSError(30, "Read-only file system"), "/ro/hook.log", cap=10, on_line=None)
    out.add(b"output")
    out.close()
    assert out.failed == "Read-only file system" and out.text() == "output"


def test_lines_are_passed_on_for_the_first_echo_bytes_then_one_says_where() -> None:
    seen: list[str] = []
    out = Output(OSError(30, "Read-only file system"), "/state/h.log", cap=0,
                 on_line=seen.append)
    out.add(b"one\ntw")
    out.add(b"o\n" + b"z" * (LINE_MAX + 5) + b"\n")
    assert seen[:2] == ["one", "two"]
    assert seen[2:4] == ["z" * LINE_MAX, "zzzzz"]  # (a line longer than LINE_MAX: cut)
    out.add(b"x\n" * ECHO)  # past ECHO: the rest is in the log only
    assert seen[-1] == "[initd: more output than initd's log shows: see /state/h.log]"
    count = len(seen)
    out.add(b"more\n" * 1000)
    out.close()
    assert len(seen) == count  # (nothing per line past ECHO)


def test_a_drain_that_read_more_than_it_kept_is_said_so(tmp_path: Path) -> None:
    path = tmp_path / "hook.log"
    out = Output(path.open("wb"), str(path), cap=100, on_line=None)
    out.add(b"a" * 100)
    out.drained(b"end", whole=False)
    out.close()
    assert path.read_bytes().endswith(
        b"\n[initd: output truncated at 100 bytes; at least 0 more bytes dropped; "
        b"its last 3 bytes follow]\nend")
