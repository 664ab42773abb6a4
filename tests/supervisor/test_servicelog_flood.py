"""A gigabyte through a service's logger (supervisor/servicelog.py, process/svlog.py): the
writer (the service, as its user) writes it all and exits 0, the logger's memory stays
bounded, the files stay capped, and root (this test's process, standing in for the
supervisor) pays nothing in proportion: it reads none of it, and its CPU ticks against
the logger's, from /proc, never wall-clock time."""

from __future__ import annotations

import os
import pwd
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.process import spawn, users
from initd.supervisor.servicelog import ServiceLog

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

GIB = 2**30
ROOT_TICKS = 10  # root's CPU ticks (1/100 s) while a GiB goes through: waiting costs none
RSS_MAX = 64 * 2**20  # the logger's peak resident size: a block, a slice's lines, Python
WRITER = """
import os
block = (b"x" * 999 + b"\\n") * 1024
for _ in range(%d // len(block)):
    view = memoryview(block)
    while view:
        view = view[os.write(1, view):]
"""


@pytest.fixture
def log_dir() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="initd-svlog-flood-"))
    base.chmod(0o755)
    yield base / "logs"
    shutil.rmtree(base, ignore_errors=True)


def proc(pid: int | str, name: str) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/{name}").read_text().splitlines()
    return dict(line.split(":", 1) for line in lines if ":" in line)


def ticks(pid: int | str) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime, every thread's


def test_a_gigabyte_costs_root_nothing_and_the_logger_a_bounded_memory(
        log_dir: Path, agent_user: pwd.struct_passwd) -> None:
    account = users.lookup(agent_user.pw_name)
    slog = ServiceLog("flood", account, str(log_dir), 8 * 2**20, 2, True,
                      stderr=os.open(os.devnull, os.O_WRONLY))
    slog.prepare()
    slog.start()
    assert slog.child is not None
    logger = slog.child.pid
    root_ticks, root_read = ticks("self"), int(proc("self", "io")["rchar"])
    writer = spawn.spawn(spawn.Spec(argv=(sys.executable, "-I", "-c", WRITER % GIB),
                                    env={}, cwd="/", account=account,
                                    stdout=slog.output_fd(), stderr=slog.output_fd()))
    code = writer.wait(240)  # (a poll on its pidfd: no CPU of root's meanwhile)
    root_ticks = ticks("self") - root_ticks
    root_read = int(proc("self", "io")["rchar"]) - root_read
    assert code == 0  # it wrote it all (a short write raises): never SIGPIPE, never stuck
    peak = int(proc(logger, "status")["VmHWM"].split()[0]) * 1024
    logger_ticks = ticks(logger)
    assert slog.close(time.monotonic() + 60) == 0
    assert peak < RSS_MAX
    assert root_ticks <= ROOT_TICKS and root_ticks * 20 <= logger_ticks, \
        (root_ticks, logger_ticks)
    assert root_read < 2**20  # (/proc's own files: root read none of the gigabyte)
    sizes = [p.stat().st_size for p in (log_dir / "flood").iterdir()]
    assert len(sizes) == 3 and sum(sizes) <= 3 * 8 * 2**20
    assert (log_dir / "flood" / "current").read_bytes()[-1000:] == b"x" * 999 + b"\n"
