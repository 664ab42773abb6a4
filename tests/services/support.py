"""What the services suite (tests/services/, issue 39: the image's ``services:``) shares:
the stand-in service's command line, its events file, the config file, the control API's
view of the services (as root through the socket, or as the agent user), and what /proc
says about a process (alive, its CPU, who reads its output).

The suite is black-box: initd is run as a container runtime would (tests/support/harness),
and everything is read from outside it: files the services write, /proc, the socket.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import yaml

from tests.service.support import call
from tests.support.harness import Initd, ns_pid, wait_for

STANDIN = Path(__file__).resolve().with_name("standin.py")
PY = sys.executable
Boot = Callable[..., Initd]  # the suite's ``boot`` fixture (conftest.py)
DEADLINE = 60.0  # seconds: every wait is for an event, and this only its deadline


def standin(box: Path, name: str, *flags: str) -> list[str]:
    """The stand-in service's command (tests/services/standin.py), as a list: exec'd."""
    return [PY, "-I", str(STANDIN), str(box), name, *flags]


def evidence_dir() -> Path:
    """A directory every user may write (services of any user record there), with the
    shared events file already there (0666)."""
    path = Path(tempfile.mkdtemp(prefix="initd-svc-box-"))
    path.chmod(0o777)
    events = path / "events"
    events.touch()
    events.chmod(0o666)
    return path


def events(box: Path) -> list[str]:
    return (box / "events").read_text().splitlines()


def wait_event(box: Path, pattern: str, timeout: float = DEADLINE) -> re.Match[str]:
    """The first events line matching ``pattern`` (the whole line), once it is there."""
    def found() -> re.Match[str] | None:
        return next((m for line in events(box) if (m := re.fullmatch(pattern, line))), None)
    return wait_for(found, timeout, what=f"event {pattern!r}")  # type: ignore[return-value]


def count(box: Path, pattern: str) -> int:
    return sum(1 for line in events(box) if re.fullmatch(pattern, line))


def pid_of(box: Path, name: str) -> int:
    """The pid ``name`` last started with, as it said it itself: its pid in initd's PID
    namespace (what the control API shows too); ``host_pid`` is the test's."""
    return int(str(wait_for(lambda: _read(box / f"{name}.pid"), DEADLINE, what=f"{name}'s pid")))


def _read(path: Path) -> str | None:
    try:
        return path.read_text() or None
    except FileNotFoundError:
        return None


def write_config(where: Path, services: dict[str, Any], **settings: object) -> Path:
    """The image's config file (``--config``): ``services:`` and any other settings."""
    path = where / "initd.yaml"
    path.write_text(yaml.safe_dump({**settings, "services": services}, sort_keys=False))
    return path


def boot_args(config: Path, user: str, ws: Path, sid: str, image: str, *more: str
              ) -> list[str]:
    """initd's flags for a boot as root with the agent ``user`` over ``ws`` (so the hook
    service, and with it the control socket, runs)."""
    return ["-v", "--log-format", "json", "--config", str(config), "--user", user,
            "--workspace", str(ws), "--session-id", sid, "--hooks-dir", image,
            "--no-precommit", *more]


# --- the control API


def rows(body: Any) -> dict[str, dict[str, Any]]:
    """GET /v1/services' answer by service name. The spec names the endpoint, not its
    shape: a list of records with a "name", that list under "services", or a mapping of
    name to record are all read (the records' keys as /v1/health's agent has them:
    state, pid, restarts, lastExitCode)."""
    found = body.get("services", body) if isinstance(body, dict) else body
    if isinstance(found, dict):
        return {name: {**row, "name": name} for name, row in found.items()}
    return {row["name"]: row for row in found}


def listing(init: Initd) -> dict[str, dict[str, Any]]:
    code, body = call(init.socket, "GET", "/v1/services")
    assert code == 200, body
    return rows(body)


def wait_state(init: Initd, name: str, *states: str, timeout: float = DEADLINE
               ) -> dict[str, Any]:
    """``name``'s record once its state is one of ``states``."""
    def seen() -> dict[str, Any] | None:
        try:
            row = listing(init).get(name)
        except Exception:  # the hook service not up yet, or restarting
            return None
        return row if row is not None and row.get("state") in states else None
    return wait_for(seen, timeout, what=f"{name} in {states}")  # type: ignore[return-value]


AS_AGENT = """
import socket, sys
sock, method, path = sys.argv[1:4]
with socket.socket(socket.AF_UNIX) as conn:
    conn.settimeout(60)
    conn.connect(sock)
    conn.sendall(f"{method} {path} HTTP/1.0\\r\\nHost: initd\\r\\nContent-Length: 0\\r\\n\\r\\n"
                 .encode())
    answer = b""
    while chunk := conn.recv(65536):
        answer += chunk
sys.stdout.write(answer.decode(errors="replace"))
"""


def agent_request(user: str, init: Initd, method: str, path: str) -> tuple[int, str]:
    """The agent user's own request on the control socket: (status, the body as sent)."""
    out = subprocess.run(["runuser", "-u", user, "--", PY, "-I", "-c", AS_AGENT, init.socket,
                          method, path], capture_output=True, timeout=DEADLINE)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    # (bytes: text mode would turn the head's CR LF into LF)
    head, _, body = out.stdout.decode(errors="replace").partition("\r\n\r\n")
    return int(head.split(" ")[1]), body


def as_user(user: str, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Python ``code`` run as ``user`` (runuser), its output kept."""
    return subprocess.run(["runuser", "-u", user, "--", PY, "-I", "-c", code, *args],
                          capture_output=True, text=True, timeout=DEADLINE)


# --- processes, as /proc shows them


def host_pid(init: Initd, pid: int) -> int:
    """The test's pid of the process whose pid is ``pid`` in initd's namespace (never
    signal a namespace's pid from outside it: it is another process here)."""
    return wait_for(lambda: next((p.pid for p in init.descendants() if ns_pid(p.pid) == pid),
                                 None), what=f"the process that is {pid} in initd's namespace"
                    )  # type: ignore[return-value]


def alive(pid: int) -> bool:
    """Is the process of (the test's) ``pid`` there, and not a zombie?"""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def cpu_ticks(pid: int) -> int:
    """utime + stime, in clock ticks (/proc/PID/stat's 14th and 15th fields)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def supervisor(init: Initd) -> psutil.Process:
    """initd's supervisor: the child of PID 1 that is initd too (forked: its command line)."""
    pid1 = psutil.Process(init.init_pid)
    return wait_for(lambda: next((p for p in pid1.children() if p.cmdline() == pid1.cmdline()),
                                 None), what="the supervisor")  # type: ignore[return-value]


def pipe_readers(init: Initd, pid: int, fd: int = 1) -> list[psutil.Process]:
    """initd's descendants (PID 1 too) that hold the read end of the pipe ``pid`` writes
    its ``fd`` to: who reads a service's output."""
    target = os.readlink(f"/proc/{pid}/fd/{fd}")
    assert target.startswith("pipe:"), target
    found = []
    for process in [psutil.Process(init.init_pid), *init.descendants()]:
        try:
            for entry in os.listdir(f"/proc/{process.pid}/fd"):
                if os.readlink(f"/proc/{process.pid}/fd/{entry}") == target and \
                        _reads(process.pid, entry):
                    found.append(process)
                    break
        except OSError:
            continue  # gone while we looked
    return found


def _reads(pid: int, fd: str) -> bool:
    with open(f"/proc/{pid}/fdinfo/{fd}") as f:
        flags = int(next(line for line in f if line.startswith("flags:")).split()[1], 8)
    return flags & os.O_ACCMODE == os.O_RDONLY


def uid_of(pid: int) -> int:
    return os.stat(f"/proc/{pid}").st_uid


def log_files(directory: Path) -> dict[str, int]:
    """The regular files of a service's log directory and their sizes."""
    return {p.name: p.stat().st_size for p in directory.iterdir()
            if stat.S_ISREG(p.lstat().st_mode)}


def dump(body: object) -> str:
    return json.dumps(body, sort_keys=True)
