"""--restart: backoff between restarts, a crash-loop limit, and the last code at the end."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sys
from typing import Any

import psutil
import pytest

from tests.support.harness import Initd, _clean_env, run, wait_for

STAMP = 'date +%s.%N; '


def gaps(lines: list[str]) -> list[float]:
    times = [float(line) for line in lines]
    return [round(b - a, 1) for a, b in itertools.pairwise(times)]


def events(init: Initd) -> list[dict[str, Any]]:
    """initd's log (--log-format json), one event a line."""
    return [json.loads(line) for line in init.stderr.splitlines() if line.startswith("{")]


# Every Backoff a long one, in the initd it is put into (PYTHONPATH): a delay no test
# waits out, so a stop that waited for it would never end by the test's deadline.
LONG_BACKOFF = """
from initd.supervisor import backoff

_init = backoff.Backoff.__init__


def _long(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self.base = self.cap = 600.0


backoff.Backoff.__init__ = _long
"""


@pytest.mark.slow
def test_crash_loop_backs_off_and_gives_up_with_last_code() -> None:
    init = run(["--log-format", "json", "--restart", "on-failure", "--max-restarts", "3",
                "--", "sh", "-c", STAMP + "exit 4"], timeout=40)
    assert init.code == 4, init.stderr
    assert len(init.stdout_lines) == 4  # the first run and three restarts
    # the 1-2-4 s schedule, as initd chose it, and each delay waited (at least: a busy
    # host only makes a gap longer)
    assert [e["delay_s"] for e in events(init) if e["event"] == "restarting after backoff"] \
        == [1, 2, 4], init.stderr
    for got, want in zip(gaps(init.stdout_lines), [1, 2, 4], strict=True):
        assert got >= want
    assert "crash loop: giving up" in init.stderr


@pytest.mark.slow
def test_on_failure_restarts_until_success(tmp_path) -> None:
    counter = tmp_path / "runs"
    script = f'echo x >> {counter}; [ "$(wc -l < {counter})" -ge 3 ]'
    init = run(["--restart", "on-failure", "--", "sh", "-c", script], timeout=30)
    assert init.code == 0
    assert counter.read_text().count("x") == 3


def test_on_failure_does_not_restart_a_success() -> None:
    init = run(["--restart", "on-failure", "--", "sh", "-c", "echo once"])
    assert (init.code, init.stdout_lines) == (0, ["once"])


@pytest.mark.slow
def test_always_restarts_a_success_too() -> None:
    init = run(["--restart", "always", "--max-restarts", "1", "--", "sh", "-c", "echo run"])
    assert (init.code, init.stdout_lines) == (0, ["run", "run"])


def test_never_is_the_default() -> None:
    init = run(["--", "sh", "-c", "echo run; exit 9"])
    assert (init.code, init.stdout_lines) == (9, ["run"])


@pytest.mark.parametrize("policy", ["on-failure", "always"])
def test_term_during_backoff_ends_promptly_with_last_code(initd, tmp_path,  # type: ignore[no-untyped-def]
                                                           policy: str) -> None:
    (tmp_path / "sitecustomize.py").write_text(LONG_BACKOFF)
    env = _clean_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    init = initd(["--log-format", "json", "--restart", policy, "--", "sh", "-c",
                  "echo run; exit 6"], env=env)
    init.expect("^run$")
    # now in the backoff (600 s: LONG_BACKOFF took)
    wait_for(lambda: [e["delay_s"] for e in events(init)
                      if e["event"] == "restarting after backoff"], what="the backoff")
    assert [e["delay_s"] for e in events(init)
            if e["event"] == "restarting after backoff"] == [600]
    init.signal(signal.SIGTERM)
    # at once, not after the backoff: that would be 600 s, far past init.wait's deadline
    assert init.wait() == 6
    assert init.stdout_lines == ["run"]  # and no restart first


# --- what a leader left in its group: stopped before the restart, off the loop.
# The first run leaves a helper in its own process group that ignores TERM (USR1, at its
# default, ends it) and exits 5; the next run says whether that helper is still there.
# Once the supervisor held its loop for the whole grace while it stopped such a helper:
# no signal was passed on meanwhile, and the stop signal waited.

LEAVES_A_HELPER = """
import os, signal, sys, time
mark = sys.argv[1]
if os.path.exists(mark):
    helper = open(mark).read()
    try:
        with open(f"/proc/{helper}/stat") as f:
            alive = f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        alive = False
    print("overlap" if alive else "alone", flush=True)
    sys.exit(0)
pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(1)
with open(mark, "w") as f:
    f.write(str(pid))
print(f"first {os.getpid()}", flush=True)
sys.exit(5)
"""
GRACE = "30"  # what a held loop would hold the signal for; the tests end long before


def _helper_left(init, tmp_path) -> int:  # type: ignore[no-untyped-def]
    """The first run's leader exited and the supervisor has reaped it: from here on,
    only what the leader left is being stopped. Returns the helper's pid."""
    leader = int(init.expect(r"^first (\d+)$").group(1))
    # (reaped: no /proc entry left; a zombie still has one, and a look at the group
    # from outside would then race the supervisor's notice of the exit)
    wait_for(lambda: not os.path.exists(f"/proc/{leader}"), timeout=15,
             what="the first leader reaped")
    return int((tmp_path / "helper").read_text())


@pytest.mark.slow
def test_a_restart_waits_for_its_predecessors_group_and_signals_flow_meanwhile(
        initd, tmp_path) -> None:  # type: ignore[no-untyped-def]
    init = initd(["--restart", "on-failure", "--grace", GRACE, "--", sys.executable, "-c",
                  LEAVES_A_HELPER, str(tmp_path / "helper")], pidns=False)
    helper = psutil.Process(_helper_left(init, tmp_path))
    init.signal(signal.SIGUSR1)  # passed on to what is left of the group: it ends the helper
    helper.wait(timeout=15)  # (a held loop passes it on only after the grace: 30 s)
    init.expect("^alone$", timeout=15)  # the next run started once the helper was gone
    assert init.wait(timeout=30) == 0, init.stderr[-3000:]


def test_the_stop_while_a_leaders_group_is_stopped_ends_with_its_code(
        initd, tmp_path) -> None:  # type: ignore[no-untyped-def]
    init = initd(["--restart", "on-failure", "--grace", GRACE, "--", sys.executable, "-c",
                  LEAVES_A_HELPER, str(tmp_path / "helper")], pidns=False)
    helper = psutil.Process(_helper_left(init, tmp_path))
    init.signal(signal.SIGTERM)  # the stop: no restart, the first run's code
    init.signal(signal.SIGUSR1)  # passed on while the stop waits for the group
    helper.wait(timeout=15)
    assert init.wait(timeout=15) == 5, init.stderr[-3000:]
    assert not any(line in ("alone", "overlap") for line in init.stdout_lines)
