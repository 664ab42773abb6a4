"""A service's logger (initd/process/svlog.py): each line of the service's output on
initd's stderr as a log line of initd's shape with its service's name, JSON that stays
valid whatever the bytes (NUL, invalid UTF-8, ANSI escapes, a 10 MB line with no
newline), the console's form escaped; the files written beside; a stderr that cannot
take a line never holds the service up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from initd.process import svlog
from initd.process.output import LINE_MAX
from initd.process.svlog import Echo

HOSTILE = (b"plain\n" b"nul \x00 here\n" b"bad utf-8 \xff\xfe\xc3\n"
           b"\x1b[2J\x1b]0;title\x07ansi\n" b"crlf\r\n" b"c1 \xc2\x9b31m\n"
           + b"y" * (10 * 2**20) + b"\n" b"last, unended")


def echoed(data: bytes, json_lines: bool = True, pieces: int = 1) -> list[str]:
    """What Echo writes for ``data`` fed in ``pieces`` parts (to a pipe read at once)."""
    r, w = os.pipe()
    got = bytearray()
    reader = threading.Thread(target=lambda: got.extend(_read_all(r)))
    reader.start()
    echo = Echo("web", json_lines, w)
    step = max(1, len(data) // pieces)
    for at in range(0, len(data), step):
        echo.feed(data[at:at + step])
    echo.end()
    os.close(w)
    reader.join()
    return got.decode("ascii" if json_lines else "utf-8").splitlines()


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


@pytest.mark.parametrize("pieces", [1, 7, 5000])
def test_every_line_is_valid_json_with_the_service_and_initds_keys(pieces: int) -> None:
    lines = [json.loads(line) for line in echoed(HOSTILE, pieces=pieces)]
    events = [line["event"] for line in lines]
    assert events == ["plain", "nul \x00 here", "bad utf-8 \ufffd\ufffd\ufffd",
                      "\x1b[2J\x1b]0;title\x07ansi", "crlf", "c1 \x9b31m",
                      "y" * LINE_MAX + svlog.CUT, "last, unended"]
    for line in lines:
        assert set(line) == {"event", "level", "logger", "timestamp", "service"}
        assert line["service"] == "web" and line["level"] == "info"
        assert line["timestamp"].endswith("Z")


def test_the_console_form_is_name_bar_line_with_controls_escaped() -> None:
    lines = echoed(HOSTILE, json_lines=False, pieces=3)
    assert lines[0] == "web | plain"
    assert lines[1] == "web | nul \\x00 here"
    assert lines[3] == "web | \\x1b[2J\\x1b]0;title\\x07ansi"
    assert lines[5] == "web | c1 \\x9b31m"
    assert all(line.startswith("web | ") for line in lines)
    assert not any(ch < " " for line in lines for ch in line)


def test_a_long_line_is_cut_once_and_its_rest_skipped() -> None:
    data = b"a" * (3 * LINE_MAX) + b"tail\nnext\n"
    assert [json.loads(line)["event"] for line in echoed(data, pieces=10)] == \
        ["a" * LINE_MAX + svlog.CUT, "next"]


def test_a_stderr_that_cannot_take_a_line_never_blocks_and_the_count_is_said() -> None:
    r, w = os.pipe()
    os.set_blocking(w, False)
    with pytest.raises(BlockingIOError):
        while True:  # a log collector that stopped reading: its pipe full
            os.write(w, b"x" * 4096)
    os.set_blocking(w, True)
    echo = Echo("web", True, w)
    echo.feed(b"one\ntwo\n")  # returns: the lines are counted, not written
    assert echo.hidden == 2
    os.set_blocking(r, False)
    with pytest.raises(BlockingIOError):
        while os.read(r, 1 << 16):  # the collector reads again
            pass
    os.set_blocking(r, True)
    echo.feed(b"three\n")
    os.close(w)
    said = [json.loads(line) for line in _read_all(r).decode().splitlines() if line[0] == "{"]
    assert [(line["event"], line.get("lines")) for line in said] == \
        [("service output lines not shown", 2), ("three", None)]


def test_run_writes_the_files_and_the_lines_then_exits_0_at_the_end(tmp_path: Path) -> None:
    out = tmp_path / "stderr"
    proc = subprocess.run(
        [sys.executable, "-I", "-m", "initd", "svlog", "--name", "web", "--dir",
         str(tmp_path), "--max-bytes", "64", "--backups", "2", "--json"],
        input=b"".join(b"line %d\n" % n for n in range(100)), stderr=out.open("wb"),
        timeout=30)
    assert proc.returncode == 0
    events = [json.loads(line)["event"] for line in out.read_text().splitlines()]
    assert events == [f"line {n}" for n in range(100)]
    kept = b"".join((tmp_path / name).read_bytes()
                    for name in ("current.2", "current.1", "current"))
    assert kept.endswith(b"line 99\n") and len(kept) <= 3 * 64
    assert b"".join(b"line %d\n" % n for n in range(100)).endswith(kept)


def test_without_a_directory_the_lines_alone(tmp_path: Path) -> None:
    r, w = os.pipe()
    err = tmp_path / "stderr"
    os.write(w, b"only here\n")
    os.close(w)
    with err.open("wb") as sink:
        assert svlog.run("web", None, 10, 1, False, stdin=r, stderr=sink.fileno()) == 0
    os.close(r)
    assert err.read_text() == "web | only here\n"
    assert list(tmp_path.iterdir()) == [err]
