"""supervisor/guards.py: boot's guard snapshot (invariant 15). A workspace and home with
none of the agents' hook files get an empty snapshot root seals itself, with no reader; with
some, a reader started as the agent (the user the tests made) reads them into a memory file
root seals; a stop signal meanwhile leaves a failed snapshot, which blocks every guard it
covers, saying why. Real files, a real reader process, a real signal."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import pwd
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.commands import options
from initd.config import log, settings
from initd.events import sources
from initd.process import users
from initd.state import snapshot
from initd.state.agentfs import Unsafe
from initd.supervisor import guards
from initd.supervisor.sigchan import SignalChannel

STOP = signal.SIGUSR2  # the stop signal here: none the test run itself uses


@pytest.fixture
def signals() -> Iterator[SignalChannel]:
    """The supervisor's signal channel, in this process: its handler and wakeup pipe
    given back afterwards."""
    before = signal.getsignal(STOP)
    channel = SignalChannel({STOP}, {STOP})
    yield channel
    signal.set_wakeup_fd(-1)
    signal.signal(STOP, before)
    os.close(channel.read_fd)
    os.close(channel._write_fd)


@pytest.fixture
def fds() -> Iterator[list[int]]:
    taken: list[int] = []
    yield taken
    for fd in taken:
        os.close(fd)


def config(workspace: Path) -> settings.Settings:
    return settings.load(options.parse(["--workspace", str(workspace), "--", "true"]), {})


def sealed(fd: int) -> bool:
    seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
    return bool(seals & fcntl.F_SEAL_WRITE and seals & fcntl.F_SEAL_SEAL)


def test_none_of_the_files_there_is_an_empty_snapshot_and_no_reader(
        tmp_path: Path, signals: SignalChannel, fds: list[int]) -> None:
    """No reader starts: the stop flag is up, and a reader would have been stopped (a
    failed snapshot); the empty one is sealed all the same."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    account = users.current()._replace(home=str(home))
    os.kill(os.getpid(), STOP)
    assert signals.stop.is_set()
    fds.append(guards.take(config(workspace), account, signals, log.get()))
    assert sealed(fds[-1])
    taken = snapshot.load(fds[-1])
    assert taken.failed is None and taken.files == {} and taken.lists == {}
    configs, directories = sources.agents(str(workspace), str(home))
    for path in (*configs, *directories):
        assert taken.covers(path)
    with pytest.raises(FileNotFoundError):  # (covered: it was not there)
        taken.read(str(workspace / ".claude" / "settings.json"), sources.CONFIG_LIMIT, True)


@pytest.fixture
def agents_workspace(agent_user: pwd.struct_passwd) -> Iterator[Path]:
    """A workspace of the agent's, where the agent can reach it (tmp_path is root's 0700)."""
    path = Path(tempfile.mkdtemp(prefix="initd-guards-ws-"))
    path.chmod(0o755)
    os.chown(path, agent_user.pw_uid, agent_user.pw_gid)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_the_reader_reads_them_as_the_agent_into_a_sealed_file(
        agent_user: pwd.struct_passwd, agents_workspace: Path, signals: SignalChannel,
        fds: list[int]) -> None:
    workspace = agents_workspace
    for name in (".claude", ".gemini"):
        (workspace / name).mkdir(parents=True)
    claude = workspace / ".claude" / "settings.json"
    claude.write_text(json.dumps({"hooks": {}}))
    root_only = workspace / ".gemini" / "settings.json"  # root's, 0600: not the agent's
    root_only.write_text("{}")
    root_only.chmod(0o600)
    for path in (workspace, workspace / ".claude", claude, workspace / ".gemini"):
        os.chown(path, agent_user.pw_uid, agent_user.pw_gid)
    account = users.lookup(agent_user.pw_name)
    fd = guards.take(config(workspace), account, signals, log.get())
    fds.append(fd)
    assert sealed(fd)
    with pytest.raises(PermissionError):
        os.write(fd, b"more")  # no process can change it from now on
    taken = snapshot.load(fd)
    assert taken.failed is None
    data, info = taken.read(str(claude), sources.CONFIG_LIMIT, True)
    assert data == claude.read_bytes() and info.st_uid == agent_user.pw_uid
    with pytest.raises(OSError) as unread:  # read as the agent: root's file was not
        taken.read(str(root_only), sources.CONFIG_LIMIT, True)
    assert unread.value.errno == errno.EACCES


def test_a_stop_signal_before_it_is_taken_leaves_a_failed_snapshot_that_blocks(
        tmp_path: Path, signals: SignalChannel, fds: list[int],
        capsys: pytest.CaptureFixture[str]) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    (workspace / ".claude").mkdir(parents=True)
    home.mkdir()
    guard = workspace / ".claude" / "settings.json"
    guard.write_text("{}")
    account = users.current()._replace(home=str(home))
    os.kill(os.getpid(), STOP)  # the stop signal, as the supervisor gets it
    fd = guards.take(config(workspace), account, signals, log.get())
    fds.append(fd)
    assert sealed(fd)
    taken = snapshot.load(fd)
    why = "the guard snapshot could not be taken before the agent started: stopped"
    assert taken.failed == why
    for path in (guard, workspace / ".discobot" / "hooks" / "10-x.sh"):
        with pytest.raises(Unsafe) as blocked:  # every file it covers: that error
            taken.read(str(path), sources.CONFIG_LIMIT, True)
        assert why in str(blocked.value)
    said = [json.loads(line) for line in capsys.readouterr().err.splitlines()
            if line.startswith("{")]
    assert [(e["event"], e["reason"]) for e in said if e["level"] == "error"] == [
        ("the session's guards could not be read before the agent started: every "
         "blockable event is blocked until initd's next start", "stopped")]
