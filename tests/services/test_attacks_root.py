"""Red team: the agent user (untrusted) trying to make root act for it through what a
service has besides its process (SERVICES-SPEC.md, "Readiness", "Output"; ARCHITECTURE.md
invariant 8; root-owned canaries as in tests/security, tests/support/attack.py).

- A readiness probe: an exec probe runs as the service's user, never root (proved by
  the probe's own ``id -u``, for the agent's service and for one of ``nobody``).
- The log path: a symlink planted where a service's log directory or file goes, before
  the boot and while it runs, never makes root write, rotate, chown or truncate what it
  points to; the logger is the service's user's process.
- sd_notify: the agent cannot say READY=1 on the NOTIFY_SOCKET of a service of another
  user (systemd's NotifyAccess= limits who may; the spec: "a socket only that service's
  user can send to"): its sendto is refused, and the service stays not ready.
"""

from __future__ import annotations

import errno
import os
import pwd
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from tests.services.support import (
    DEADLINE,
    Boot,
    as_user,
    host_pid,
    listing,
    pipe_readers,
    standin,
    uid_of,
    wait_state,
)
from tests.support.attack import Canary
from tests.support.harness import Initd, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
LOG = {"max_bytes": 65536, "backups": 2}


@pytest.fixture
def canary() -> Iterator[Canary]:
    made = Canary()
    yield made
    made.remove()


def test_an_exec_probe_runs_as_its_services_user(boot: Boot, box: Path,
                                                 agent_user: pwd.struct_passwd) -> None:
    def probed(name: str) -> dict[str, object]:
        return {"command": standin(box, name),
                "ready": {"exec": ["sh", "-c", f"id -u > {box}/{name}-probe"]}}
    init = boot({"mine": probed("mine"), "theirs": {**probed("theirs"), "user": "nobody"}})
    assert wait_state(init, "mine", "running") and wait_state(init, "theirs", "running")
    nobody = pwd.getpwnam("nobody").pw_uid
    for name, uid in (("mine", agent_user.pw_uid), ("theirs", nobody)):
        probe = box / f"{name}-probe"
        assert probe.read_text().strip() == str(uid), name
        assert probe.stat().st_uid == uid  # made by the probe's own process


def talker(box: Path, name: str) -> str:
    """Gated, then enough lines for several rotations, then END-NAME (once the logger
    passed that on, it has handled everything before it)."""
    return (f"while [ ! -e {box}/go ]; do sleep 0.05; done; "
            f"yes {name}-says-a-long-line-of-output | head -c 400000; "
            f"echo END-{name}; exec sleep 1000")


def settled(init: Initd, name: str) -> bool:
    """The logger passed END-NAME on (it handled everything before it), or the service
    is no longer running as it was (initd refused its log path, or the logger ended and
    the service with it): either way, what root would have done through the path it did."""
    if f"END-{name}" in init.stderr:
        return True
    try:
        row = listing(init)[name]
    except Exception:  # the hook service between two lives
        return False
    return row.get("state") not in ("running", "starting") or bool(row.get("restarts"))


def test_a_log_path_planted_before_the_boot_never_reaches_roots_files(
        boot: Boot, box: Path, logdir: Path, canary: Canary,
        agent_user: pwd.struct_passwd) -> None:
    (logdir / "dirlink").symlink_to(canary.dir)  # the service's log directory itself
    (logdir / "filelink").mkdir()  # a directory the agent kept from an earlier run…
    (logdir / "filelink" / "current").symlink_to(canary.victim)  # …its file to root's
    for n in (1, 2, 3):
        (logdir / "filelink" / f"current.{n}").symlink_to(canary.secret)
    os.chown(logdir / "filelink", agent_user.pw_uid, agent_user.pw_gid)
    services = {name: {"command": talker(box, name), "log": LOG}
                for name in ("dirlink", "filelink")}
    init = boot(services)
    (box / "go").touch()
    wait_for(lambda: settled(init, "dirlink") and settled(init, "filelink"), timeout=120,
             what="both services' output handled")
    assert canary.changes() == []


def test_a_log_path_replaced_while_running_never_reaches_roots_files(
        boot: Boot, box: Path, logdir: Path, canary: Canary,
        agent_user: pwd.struct_passwd) -> None:
    init = boot({"web": {"command": talker(box, "web"), "log": LOG}})
    web = host_pid(init, int(wait_state(init, "web", "running")["pid"]))
    loggers = cast(list[int], wait_for(lambda: [p.pid for p in pipe_readers(init, web)
                                                if uid_of(p.pid) != 0], what="web's logger"))
    assert {uid_of(pid) for pid in loggers} == {agent_user.pw_uid}  # never root's
    home = logdir / "web"
    assert home.is_dir() and not home.is_symlink()
    script = (f"cd {home} && rm -f current current.1 current.2 && "
              f"ln -s {canary.victim} current && ln -s {canary.secret} current.1 && "
              f"ln -s {canary.sub} current.2")
    out = subprocess.run(["runuser", "-u", agent_user.pw_name, "--", "sh", "-c", script],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr  # (the agent's own directory: it may)
    (box / "go").touch()
    wait_for(lambda: settled(init, "web"), timeout=120, what="web's output handled")
    assert canary.changes() == []


SEND = """
import socket, sys
path = sys.argv[1]
address = "\\0" + path[1:] if path.startswith("@") else path
with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
    try:
        s.sendto(b"READY=1", address)
    except OSError as err:
        print(err.errno)
    else:
        print("sent")
"""


def test_the_agent_cannot_notify_for_a_service_of_another_user(
        boot: Boot, box: Path, agent_user: pwd.struct_passwd) -> None:
    services = {"rootsvc": {"user": "root", "ready": {"notify": True}, "ready_timeout": 600,
                            "command": standin(box, "rootsvc", "--gate", str(box / "go"),
                                               "--ready", "notify")},
                "web": {"command": standin(box, "web"), "after": ["rootsvc"]}}
    init = boot(services)
    notify = box / "rootsvc.notify"  # (it told the world: the attack's best case)
    address = str(wait_for(lambda: notify.exists() and notify.read_text(), DEADLINE,
                           what="its socket"))
    assert address != "-"
    said = as_user(agent_user.pw_name, SEND, address)
    assert said.stdout.strip() in (str(errno.EACCES), str(errno.EPERM)), said
    for _ in range(3):  # (round trips: time for a datagram, had one gone through)
        assert wait_state(init, "rootsvc", "starting", timeout=5)
    assert wait_state(init, "web", "waiting")
    (box / "go").touch()  # the service's own READY=1 (the control: it is the way)
    assert wait_state(init, "rootsvc", "running") and wait_state(init, "web", "running")
