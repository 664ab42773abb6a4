"""PID 1's lines (initd/pid1/log.py) and every other process's (initd/config/log.py, with
structlog) are one log: the same keys and the same timestamp in JSON, each written with
one write. Real processes, their real stderr."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from datetime import datetime

import pytest

from initd.pid1 import log as pid1log

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def lines(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    return out.stderr.splitlines()


def test_pid1_and_structlog_write_one_shape() -> None:
    [mine] = lines("from initd.pid1.log import Log, INFO\n"
                   "Log(verbose=1, json_lines=True)(INFO, 'supervisor exited', code=3)")
    [theirs] = lines("from initd.config import log\nlog.configure(1, 'json')\n"
                     "log.get(logger='supervisor').info('settings', code=3)")
    pid1, supervisor = json.loads(mine), json.loads(theirs)
    assert set(pid1) == set(supervisor) == {"event", "level", "logger", "timestamp", "code"}
    assert (pid1["level"], pid1["logger"]) == ("info", "pid1")
    assert supervisor["level"] == "info"
    for line in (pid1, supervisor):
        assert STAMP.fullmatch(line["timestamp"]), line


@pytest.mark.parametrize("now", [0.0, 1_700_000_000.5, 1_764_316_800.999999,
                                 1_764_316_800.9999996])
def test_the_timestamp_is_structlogs_iso_form(now: float) -> None:
    stamp = pid1log.timestamp(now)
    assert STAMP.fullmatch(stamp)
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    assert abs(parsed - now) <= 1e-6


def test_the_timestamp_is_now() -> None:
    before = time.time()
    stamp = datetime.fromisoformat(pid1log.timestamp().replace("Z", "+00:00")).timestamp()
    assert before - 1e-6 <= stamp <= time.time() + 1e-6


def test_a_logger_made_before_the_configuration_follows_it() -> None:
    """A logger bound before ``configure`` (a module's own) writes as configured after."""
    got = lines("from initd.config import log\nlogger = log.get(logger='x')\n"
                "log.configure(1, 'json')\nlogger.info('first')\n"
                "log.configure(1, 'console')\nlogger.info('second')")
    assert json.loads(got[0])["event"] == "first"
    assert "second" in got[1] and not got[1].startswith("{")


def test_a_quiet_start_never_imports_structlog() -> None:
    [modules] = lines("import sys\nfrom initd.config import log\nlog.configure(0, 'json')\n"
                      "log.get(logger='x').info('not shown')\n"
                      "print(sorted(m for m in sys.modules if m.startswith('structlog')),"
                      " file=sys.stderr)")
    assert modules == "[]"
