"""A service's output (SERVICES-SPEC.md, "Output"): read by a logger running as the
service's user, written to rotated files that stay capped however much comes, and
passed to initd's stderr as log lines carrying the service's name. Root never reads the
bytes, so a flood costs the supervisor nothing in proportion.

Reference for the files: s6-log, doc/s6-log.html (github:skarnet/s6 d73e657, 2026-06-22;
https://skarnet.org/software/s6/s6-log.html): "current: the file where selected log lines
are appended"; "When current becomes too big, a rotation happens ... If there are too
many archive files in the logdir, the older ones are then deleted". s6-log names its
archives by timestamp; the spec names them current.1 … current.N (and its own example
says NAME.log.1 … NAME.log.N: the cap is checked over every file of the service's log,
whatever its name).
"""

from __future__ import annotations

import json
import pwd
from pathlib import Path
from typing import cast

import psutil
import pytest

from tests.services.support import (
    Boot,
    cpu_ticks,
    host_pid,
    pid_of,
    pipe_readers,
    standin,
    supervisor,
    uid_of,
    wait_state,
)
from tests.support import harness
from tests.support.harness import wait_for

GIB = 1 << 30
MAX_BYTES, BACKUPS = 1 << 20, 2
SHARE = 0.1  # of the logger's CPU, at most, for the supervisor and PID 1 together


def files(logdir: Path) -> dict[Path, int]:
    """Every regular file of the services' logs and its size (a file gone while we
    looked, rotated away, is not counted)."""
    found = {}
    for path in logdir.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink():
                found[path] = path.stat().st_size
        except FileNotFoundError:
            continue
    return found


def ends_with(path: Path, text: bytes) -> bool:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, path.stat().st_size - 64))
            return f.read().endswith(text)
    except FileNotFoundError:
        return False


@pytest.fixture
def quiet_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    """initd's stderr to /dev/null: every line of the flood is passed there as a log line,
    and the harness would keep a gigabyte of them in memory."""
    monkeypatch.setattr(harness, "UNSHARE",
                        ["sh", "-c", 'exec "$@" 2>/dev/null', "sh", *harness.UNSHARE])


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_a_gigabyte_of_output_stays_capped_and_costs_the_supervisor_little(
        boot: Boot, box: Path, logdir: Path, agent_user: pwd.struct_passwd,
        quiet_stderr: None) -> None:
    services = {"flood": {"command": standin(box, "flood", "--gate", str(box / "go"),
                                             "--flood", str(GIB)),
                          "log": {"max_bytes": MAX_BYTES, "backups": BACKUPS}}}
    init = boot(services)
    assert wait_state(init, "flood", "running")
    flood = host_pid(init, pid_of(box, "flood"))
    # the logger: what holds the pipe's read end as the service's user (root may hold it
    # too, as s6-svscan holds a logger's pipe across its restarts: its CPU tells)
    loggers = cast(list[psutil.Process], wait_for(
        lambda: [p for p in pipe_readers(init, flood) if uid_of(p.pid) == agent_user.pw_uid],
        what="the logger, as the service's user"))
    root = [supervisor(init).pid, init.init_pid]
    before = sum(map(cpu_ticks, root)), sum(cpu_ticks(p.pid) for p in loggers)
    (box / "go").touch()
    biggest = 0

    def done() -> bool:
        nonlocal biggest
        now = files(logdir)
        biggest = max(biggest, sum(now.values()))
        return any(ends_with(path, b"FLOOD-END\n") for path in now)
    wait_for(done, timeout=1100, what="the flood's last line in its log")
    after = sum(map(cpu_ticks, root)), sum(cpu_ticks(p.pid) for p in loggers)
    assert biggest <= (BACKUPS + 1) * MAX_BYTES, biggest
    kept = files(logdir)
    assert sum(kept.values()) <= (BACKUPS + 1) * MAX_BYTES
    assert len(kept) <= BACKUPS + 1, sorted(map(str, kept))
    assert {path.stat().st_uid for path in kept} == {agent_user.pw_uid}  # the logger's
    logger, root_cpu = after[1] - before[1], after[0] - before[0]
    assert logger > 0 and root_cpu <= SHARE * logger, (root_cpu, logger)


@pytest.mark.timeout(240)
def test_each_line_reaches_initds_stderr_with_the_services_name(boot: Boot, box: Path
                                                                ) -> None:
    """SERVICES-SPEC.md: the logger "passes each line to initd's stderr as a log line
    carrying "service": NAME (JSON when initd logs JSON)" (the suite's boot logs JSON)."""
    init = boot({"talker": {"command": "echo hello-from-talker; echo to-stderr >&2; "
                                       "exec sleep 1000", "restart": "never"}})
    assert wait_state(init, "talker", "running")

    def said(text: str) -> bool:
        for line in init.stderr.splitlines():
            if text in line and line.startswith("{"):
                record = json.loads(line)
                if record.get("service") == "talker":
                    return True
        return False
    wait_for(lambda: said("hello-from-talker") and said("to-stderr"), timeout=60,
             what="the talker's lines in initd's log")
