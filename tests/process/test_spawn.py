"""proc: spawn and stop-by-escalation on real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest

from initd.errors import InitdError
from initd.process import spawn as proc
from initd.process import users
from tests.support.harness import wait_for


def spawn(script: str, **kw: object) -> proc.Child:
    return proc.spawn(proc.Spec(argv=("sh", "-c", script), env=os.environ, cwd="/",
                                **kw))  # type: ignore[arg-type]


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("script", ["exec sleep 30", "trap '' TERM; sleep 30 & wait",
                                    "exit 0"], ids=["graceful", "ignores-term", "exited"])
def test_stop_leaves_no_process_and_no_fd(script: str) -> None:
    before = open_fds()
    child = spawn(script)
    if "sleep" in script:  # set up (its trap set, its sleep started), not stopped before
        wait_for(lambda: "sleep" in _names(child.pgid), what="the sleep")
    group = [p for p in psutil.process_iter(["pid"]) if _pgid(p.pid) == child.pgid]
    proc.stop(child, signal.SIGTERM, grace=0.3)
    # Dead; a KILLed grandchild may be a zombie a moment longer, awaiting its reaper.
    assert all(not p.is_running() or p.status() == psutil.STATUS_ZOMBIE for p in group)
    assert open_fds() == before  # the pidfd is closed however the child ended


@pytest.mark.slow
def test_stop_returns_at_the_deadline_although_a_grandchild_holds_the_pipe() -> None:
    child = spawn("trap '' TERM; (trap '' TERM; exec sleep 1000) & exec sleep 1000",
                  stdout=proc.PIPE)
    # both execs done: the leader and the grandchild both ignore TERM from here on
    wait_for(lambda: _names(child.pgid) == ["sleep", "sleep"], what="both sleeps")
    done: list[int] = []
    started = time.monotonic()
    worker = threading.Thread(target=lambda: done.append(
        proc.stop(child, signal.SIGTERM, grace=0.5)), daemon=True)
    worker.start()
    # A stop that waited on the pipe would wait for the grandchild's sleep (1000 s): one
    # that returns by this deadline did not.
    worker.join(30)
    if not done:
        os.killpg(child.pgid, signal.SIGKILL)
        pytest.fail("proc.stop went on past its deadline")
    assert done == [-signal.SIGKILL]  # the grace ran out: KILL, as TERM was ignored
    assert time.monotonic() - started >= 0.5  # the grace was given first


def test_exec_failures_map_to_126_and_127(tmp_path) -> None:
    with pytest.raises(proc.ExecFailed) as missing:
        proc.spawn(proc.Spec(argv=("/nonexistent",), env=os.environ, cwd="/"))
    assert (missing.value.exit_code, str(missing.value)) == (
        127, "/nonexistent: No such file or directory")
    with pytest.raises(proc.ExecFailed) as not_exec:
        proc.spawn(proc.Spec(argv=(str(tmp_path),), env=os.environ, cwd="/"))
    assert not_exec.value.exit_code == 126


def test_bad_working_directory_is_initd_error_not_exec_failure() -> None:
    with pytest.raises(InitdError, match="cannot enter working directory /nonexistent"):
        proc.spawn(proc.Spec(argv=("true",), env=os.environ, cwd="/nonexistent"))


@pytest.mark.skipif(os.geteuid() != 0, reason="a mount namespace needs root")
def test_a_missing_dev_null_is_named_not_blamed_on_the_command() -> None:
    """A root without /dev/null (a bare chroot): the command is fine, the error says
    what is missing instead of "CMD: No such file or directory"."""
    script = ("from initd.process import spawn as proc\n"
              "try: proc.spawn(proc.Spec(argv=('true',), env={}, cwd='/', "
              "stdout=proc.DEVNULL))\n"
              "except Exception as err: print(type(err).__name__, err)\n")
    out = subprocess.run(["unshare", "--mount", "sh", "-c",
                          'mount -t tmpfs none /dev && exec "$0" -c "$1"',
                          sys.executable, script], capture_output=True, text=True)
    assert out.stdout.strip() == \
        "InitdError cannot start true: /dev/null: No such file or directory", out.stderr


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


@pytest.mark.skipif(os.geteuid() != 0, reason="setgroups needs root")
def test_credentials_are_changed_unless_they_are_exactly_ours_already() -> None:
    """A child that changes no credentials is started with vfork (proc._already); one
    whose account differs from ours in anything, supplementary groups included, gets
    exactly that account's."""
    me = users.current()

    def groups(account: users.Account) -> set[int]:
        child = proc.spawn(proc.Spec(argv=("sh", "-c", "id -G"), env=os.environ, cwd="/",
                                     account=account, stdout=proc.PIPE))
        assert child.popen.stdout is not None
        with child.popen.stdout as stdout:
            out = stdout.read()  # (EOF: id has exited)
        assert child.wait(None) == 0
        return {int(g) for g in out.split()}

    assert groups(me) == {me.gid, *os.getgroups()}
    other = me._replace(groups=(me.gid, 4, 27))  # the same uid and gid: other groups
    assert groups(other) == {me.gid, 4, 27}


def _names(pgid: int) -> list[str]:
    """The names of the live (not zombie) members of process group ``pgid``."""
    names = []
    for p in psutil.process_iter(["pid"]):
        try:
            if _pgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                names.append(p.name())
        except psutil.Error:
            continue  # gone while we looked
    return sorted(names)
