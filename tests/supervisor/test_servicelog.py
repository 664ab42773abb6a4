"""A service's output, root's side (initd/supervisor/servicelog.py), with real processes and
a real user: the directories root makes (and those it refuses), the logger run as the
service's user from /, isolated, its lines on the stderr it is given with the service's
name, the files capped, a logger that died started again on the same pipe (the writer
never gets SIGPIPE), and the end: the last lines read, then the logger waited for until
the deadline, killed after it."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.errors import InitdError
from initd.process import spawn, users
from initd.supervisor import servicelog
from initd.supervisor.servicelog import ServiceLog
from tests.support.harness import wait_for

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="cannot run here: needs root")
END = 30.0  # seconds: a deadline the logger meets at once (never a pace)


@pytest.fixture
def account(agent_user: pwd.struct_passwd) -> users.Account:
    return users.lookup(agent_user.pw_name)


@pytest.fixture
def log_dir() -> Iterator[Path]:
    """A log_dir's place that the logger, another user, can walk through (pytest's
    tmp_path is under a 0700 directory of root's)."""
    base = Path(tempfile.mkdtemp(prefix="initd-svlog-"))
    base.chmod(0o755)
    yield base / "logs"
    shutil.rmtree(base, ignore_errors=True)


def stderr_file(tmp_path: Path) -> tuple[Path, int]:
    path = tmp_path / "stderr"
    return path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


@ROOT_ONLY
def test_prepare_makes_roots_directory_and_the_services(log_dir: Path,
                                                        account: users.Account) -> None:
    ServiceLog("web", account, str(log_dir), 100, 1, True).prepare()
    top, mine = log_dir.lstat(), (log_dir / "web").lstat()
    assert (top.st_uid, stat.S_IMODE(top.st_mode) & 0o022) == (0, 0)
    assert (mine.st_uid, mine.st_gid, stat.S_IMODE(mine.st_mode)) == \
        (account.uid, account.gid, 0o750)
    os.chown(log_dir / "web", 0, 0)  # an image's, root's: given to the service's user
    ServiceLog("web", account, str(log_dir), 100, 1, True).prepare()
    assert (log_dir / "web").lstat().st_uid == account.uid


@ROOT_ONLY
@pytest.mark.parametrize("problem", ["others may write", "the agent's"])
def test_a_log_dir_others_may_write_is_refused(log_dir: Path, account: users.Account,
                                               problem: str) -> None:
    log_dir.mkdir()
    if problem == "others may write":
        log_dir.chmod(0o777)
    else:
        os.chown(log_dir, account.uid, account.gid)
    with pytest.raises(InitdError, match=f"{log_dir}.*not used"):
        ServiceLog("web", account, str(log_dir), 100, 1, True).prepare()
    assert not (log_dir / "web").exists()


@ROOT_ONLY
def test_a_directory_of_another_uid_is_refused(log_dir: Path,
                                               account: users.Account) -> None:
    (log_dir / "web").mkdir(parents=True)
    os.chown(log_dir / "web", account.uid + 1, 0)
    with pytest.raises(InitdError, match=f"{log_dir / 'web'} belongs to uid"):
        ServiceLog("web", account, str(log_dir), 100, 1, True).prepare()


@ROOT_ONLY
def test_the_logger_runs_as_the_services_user_from_root_isolated(
        tmp_path: Path, log_dir: Path, account: users.Account) -> None:
    path, err = stderr_file(tmp_path)
    slog = ServiceLog("web", account, str(log_dir), 1000, 2, True, stderr=err)
    slog.prepare()
    slog.start()
    assert slog.child is not None
    pid = slog.child.pid
    status = Path(f"/proc/{pid}/status").read_text()
    uid_line = next(line for line in status.splitlines() if line.startswith("Uid:"))
    assert uid_line.split()[1:] == [str(account.uid)] * 4
    assert os.readlink(f"/proc/{pid}/cwd") == "/"
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert argv[1:5] == [b"-I", b"-m", b"initd", b"svlog"]
    env = dict(item.split(b"=", 1) for item in
               Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if item)
    assert env[b"USER"] == account.name.encode() and b"INITD_SOCKET" not in env
    write_all(slog.output_fd(), b"hello\nworld\n")
    assert slog.close(time.monotonic() + END) == 0
    os.close(err)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(line["event"], line["service"]) for line in lines] == \
        [("hello", "web"), ("world", "web")]
    assert (log_dir / "web" / "current").read_bytes() == b"hello\nworld\n"
    assert (log_dir / "web" / "current").stat().st_uid == account.uid


@ROOT_ONLY
def test_rotation_caps_the_files_whatever_the_service_writes(
        tmp_path: Path, log_dir: Path, account: users.Account) -> None:
    path, err = stderr_file(tmp_path)
    slog = ServiceLog("web", account, str(log_dir), 4096, 3, False, stderr=err)
    slog.prepare()
    slog.start()
    writer = spawn.spawn(spawn.Spec(  # the service: another process, as its user
        argv=("/bin/sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo line $i; "
              "i=$((i+1)); done"), env={"PATH": "/usr/bin:/bin"}, cwd="/",
        account=account, stdout=slog.output_fd(), stderr=slog.output_fd()))
    assert writer.wait(END) == 0
    assert slog.close(time.monotonic() + END) == 0
    os.close(err)
    sizes = {p.name: p.stat().st_size for p in (log_dir / "web").iterdir()}
    assert set(sizes) == {"current", "current.1", "current.2", "current.3"}
    assert all(size <= 4096 for size in sizes.values())
    assert sum(sizes.values()) <= 4 * 4096
    assert (log_dir / "web" / "current").read_text().endswith("line 2999\n")
    shown = path.read_text().splitlines()
    assert shown[0] == "web | line 0" and shown[-1] == "web | line 2999" and len(shown) == 3000


@ROOT_ONLY
def test_a_logger_that_died_is_started_again_on_the_same_pipe(
        tmp_path: Path, log_dir: Path, account: users.Account,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(servicelog, "RESTART_GAP", 0.0)
    path, err = stderr_file(tmp_path)
    slog = ServiceLog("web", account, str(log_dir), 10000, 1, True, stderr=err)
    slog.prepare()
    slog.start()
    fd = slog.output_fd()
    write_all(fd, b"before\n")
    wait_for(lambda: "before" in path.read_text(), END)
    assert slog.child is not None
    first = slog.child.pid
    os.kill(first, signal.SIGKILL)  # (the service's user may: the logger is its process)
    wait_for(lambda: slog.fileno() in spawn.wait_fds([slog.fileno()], 0), END)
    write_all(fd, b"meanwhile\n")  # no reader running: the pipe holds it, no SIGPIPE
    assert slog.output_fd() == fd and slog.child is not None and slog.child.pid != first
    write_all(fd, b"after\n")
    assert slog.close(time.monotonic() + END) == 0
    os.close(err)
    events = [json.loads(line)["event"] for line in path.read_text().splitlines()]
    assert [e for e in events if not e.startswith("service ")] == \
        ["before", "meanwhile", "after"]
    assert (log_dir / "web" / "current").read_bytes() == b"before\nmeanwhile\nafter\n"


@ROOT_ONLY
def test_close_kills_a_logger_whose_pipe_a_leftover_still_holds(
        log_dir: Path, account: users.Account) -> None:
    slog = ServiceLog("web", account, str(log_dir), 1000, 1, True, stderr=os.open(
        os.devnull, os.O_WRONLY))
    slog.prepare()
    slog.start()
    leftover = spawn.spawn(spawn.Spec(argv=("/bin/sleep", "60"), env={}, cwd="/",
                                      account=account, stdout=slog.output_fd()))
    try:
        assert slog.close(time.monotonic() + 0.3) == -signal.SIGKILL
    finally:
        spawn.stop(leftover, signal.SIGKILL, 0.0)
    assert slog.child is None and slog.fileno() == -1


def test_without_a_directory_the_logger_still_runs(tmp_path: Path) -> None:
    path, err = stderr_file(tmp_path)
    (tmp_path / "ro").mkdir(mode=0o555)
    slog = ServiceLog("web", None, str(tmp_path / "ro" / "x" / "logs"), 100, 1, False,
                      stderr=err)
    if os.geteuid() != 0:
        with pytest.raises(InitdError, match="its log directory"):
            slog.prepare()
    slog.start()
    write_all(slog.output_fd(), b"shown\n")
    assert slog.close(time.monotonic() + END) == 0
    os.close(err)
    assert "web | shown" in path.read_text().splitlines()


@ROOT_ONLY
def test_a_logger_is_started_again_at_most_once_a_gap(
        log_dir: Path, account: users.Account, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent may kill its services' loggers in a loop: root starts one again no
    sooner than RESTART_GAP after the last start, and says when (for its poll)."""
    slog = ServiceLog("web", account, str(log_dir), 1000, 1, True,
                      stderr=os.open(os.devnull, os.O_WRONLY))
    slog.start()
    assert slog.revive_in() is None and slog.child is not None
    now = slog.started
    monkeypatch.setattr(servicelog.time, "monotonic", lambda: now + 0.25)
    os.kill(slog.child.pid, signal.SIGKILL)
    slog.child.popen.wait()
    assert slog.revive_in() == pytest.approx(servicelog.RESTART_GAP - 0.25)
    assert not slog.revive() and slog.child is None and slog.code == -signal.SIGKILL
    monkeypatch.setattr(servicelog.time, "monotonic", lambda: now + servicelog.RESTART_GAP)
    assert slog.revive_in() == 0.0
    assert slog.revive() and slog.revive_in() is None
    assert slog.close(now + END) == 0


def test_the_lines_go_to_initds_own_stderr_by_default(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    slog = ServiceLog("api", None, str(tmp_path / "logs"), 1000, 1, True)
    slog.start()  # (not prepared: the lines alone)
    write_all(slog.output_fd(), b"to initd's stderr\n")
    assert slog.close(time.monotonic() + END) == 0
    line = json.loads(capfd.readouterr().err)
    assert (line["event"], line["service"], line["logger"]) == \
        ("to initd's stderr", "api", "output")


@ROOT_ONLY
def test_a_log_dir_under_a_directory_the_agent_may_change_is_refused(
        log_dir: Path, account: users.Account) -> None:
    """Under a directory of the agent's, <log_dir> could be swapped for one of its own
    after root checked it (with a world-writable current in it, for another service's
    user's output): refused, and nothing made there."""
    theirs = log_dir.parent / "theirs"
    theirs.mkdir()
    os.chown(theirs, account.uid, account.gid)
    with pytest.raises(InitdError, match=f"{theirs}.*may be changed by someone other than "
                                         "root"):
        ServiceLog("web", account, str(theirs / "logs" / "x"), 100, 1, True).prepare()
    assert list(theirs.iterdir()) == []
    (theirs / "logs").mkdir()  # root's own, in theirs: still theirs to swap
    with pytest.raises(InitdError, match="may be changed by someone other than root"):
        ServiceLog("web", account, str(theirs / "logs"), 100, 1, True).prepare()
    assert list((theirs / "logs").iterdir()) == []
