"""A service's log directory against the agent (supervisor/servicelog.py, process/svfiles.py).

Root makes ``<log_dir>`` and ``<log_dir>/<name>`` and nothing else there: a link, FIFO or
file the agent planted at either is refused, named, never followed; a ``<log_dir>`` the
agent could write is refused. Inside the service's directory (the agent's own, for a
service run as the agent) only the logger writes, as the service's user: links to
root's files planted at ``current`` and its rotations, before it starts and while it
rotates, are replaced, never written through. The canary never changes."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.errors import InitdError
from initd.process import spawn, users
from initd.supervisor.servicelog import ServiceLog
from tests.support.attack import Agent, Canary, as_agent

END = 60.0  # seconds: a deadline, never a pace


@pytest.fixture
def base() -> Iterator[Path]:
    """Where the tests' log_dir goes: a 0755 directory of root's in /tmp."""
    path = Path(tempfile.mkdtemp(prefix="initd-atk-logs-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def service_log(agent: Agent, log_dir: Path, max_bytes: int = 4096) -> ServiceLog:
    return ServiceLog("web", users.lookup(agent.name), str(log_dir), max_bytes, 3, True,
                      stderr=os.open(os.devnull, os.O_WRONLY))


@pytest.mark.parametrize("planted", ["symlink", "fifo", "file"])
def test_what_the_agent_planted_at_the_services_directory_is_refused(
        agent: Agent, canary: Canary, base: Path, planted: str) -> None:
    """A log_dir the agent may write (a sticky /tmp-like one) is refused whole; one of
    root's with the agent's name planted in it (an earlier container's volume) too."""
    sticky = base / "sticky"
    sticky.mkdir(mode=0o1777)
    sticky.chmod(0o1777)
    as_agent(agent, f"ln -s {canary.dir} {sticky}/logs")
    with pytest.raises(InitdError, match=f"{sticky}/logs may be changed by someone other"):
        service_log(agent, sticky / "logs").prepare()
    log_dir = base / "logs"
    log_dir.mkdir()
    place = {"symlink": f"ln -s {canary.dir} {sticky}/web", "fifo": f"mkfifo {sticky}/web",
             "file": f"touch {sticky}/web"}[planted]
    as_agent(agent, place)
    os.rename(sticky / "web", log_dir / "web")  # (root's directory: as if left there)
    with pytest.raises(InitdError, match=f"{log_dir}/web is a symbolic link or not a "
                                         "directory"):
        service_log(agent, log_dir).prepare()
    assert canary.changes() == []
    assert os.stat(canary.dir).st_uid == 0


def test_links_planted_in_the_services_directory_are_never_written_through(
        agent: Agent, canary: Canary, base: Path) -> None:
    log_dir = base / "logs"
    service_log(agent, log_dir).prepare()  # an earlier boot's: the agent's own directory
    mine = log_dir / "web"
    as_agent(agent, f"ln -s {canary.victim} {mine}/current && ln -s {canary.secret} "
                    f"{mine}/current.1 && mkfifo {mine}/current.2 && "
                    f"ln {canary.sub} {mine}/current.3 2>/dev/null; true")
    slog = service_log(agent, log_dir)
    slog.prepare()
    slog.start()
    write_lines(slog, 2000)
    assert slog.close(time.monotonic() + END) == 0
    assert canary.changes() == []
    for entry in mine.iterdir():
        assert entry.is_file() and not entry.is_symlink(), entry
        assert entry.stat().st_uid == agent.uid


def test_links_planted_while_the_logger_rotates_are_never_written_through(
        agent: Agent, canary: Canary, base: Path) -> None:
    slog = service_log(agent, base / "logs", max_bytes=2048)
    slog.prepare()
    slog.start()
    mine = base / "logs" / "web"
    names = " ".join(f"{mine}/current{suffix}" for suffix in ("", ".1", ".2", ".3"))
    attack = subprocess.Popen(  # the agent, racing the rotations for the whole run
        ["runuser", "-u", agent.name, "--", "sh", "-c",
         f"while :; do for n in {names}; do ln -sfn {canary.victim} $n.x && "
         f"mv -fT $n.x $n; done; done"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        write_lines(slog, 20000)
    finally:
        attack.kill()
        attack.wait()
    assert slog.close(time.monotonic() + END) == 0
    assert canary.changes() == []


def write_lines(slog: ServiceLog, count: int) -> None:
    """The service: a process of the agent's writing ``count`` lines to its output."""
    assert slog.account is not None
    writer = spawn.spawn(spawn.Spec(
        argv=("/bin/sh", "-c", f"i=0; while [ $i -lt {count} ]; do echo line $i; "
              "i=$((i+1)); done"), env={"PATH": "/usr/bin:/bin"}, cwd="/",
        account=slog.account, stdout=slog.output_fd()))
    assert writer.wait(END) == 0
