"""A service's log directory on a full disk (supervisor/servicelog.py, process/svfiles.py):
the logger says so once, keeps draining the pipe (the service never blocks, never gets
SIGPIPE) and keeps passing every line to initd's stderr; at the end it exits 0."""

from __future__ import annotations

import json
import os
import pwd
import time
from pathlib import Path

from initd.process import spawn, users
from initd.supervisor.servicelog import ServiceLog
from tests.support import tmpfs

LINES = 40000  # ~1.3 MB of output: more than the 256 KiB disk holds


def test_a_full_disk_is_said_once_and_the_output_still_flows(
        tmp_path: Path, agent_user: pwd.struct_passwd) -> None:
    account = users.lookup(agent_user.pw_name)
    err_path = tmp_path / "stderr"
    err = os.open(err_path, os.O_WRONLY | os.O_CREAT, 0o600)
    with tmpfs.mounted("size=256k,mode=0755") as disk:
        slog = ServiceLog("web", account, str(disk / "logs"), 16 * 2**20, 1, True,
                          stderr=err)
        slog.prepare()
        slog.start()
        writer = spawn.spawn(spawn.Spec(
            argv=("/bin/sh", "-c", f"i=0; while [ $i -lt {LINES} ]; do "
                  "echo line $i of the service; i=$((i+1)); done"),
            env={"PATH": "/usr/bin:/bin"}, cwd="/", account=account,
            stdout=slog.output_fd()))
        assert writer.wait(120) == 0
        assert slog.close(time.monotonic() + 60) == 0
        kept = (disk / "logs" / "web" / "current").stat().st_size
    os.close(err)
    lines = [json.loads(line) for line in err_path.read_text().splitlines()]
    notes = [line for line in lines if line["event"].startswith("service ")]
    assert [(n["event"], n["level"], n["service"]) for n in notes] == \
        [("service log files not written", "warning", "web")]
    assert "No space left on device" in notes[0]["error"]
    shown = [line["event"] for line in lines if line not in notes]
    assert shown == [f"line {n} of the service" for n in range(LINES)]
    assert 0 < kept <= 256 * 1024
