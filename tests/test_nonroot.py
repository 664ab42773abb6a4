"""initd started by a user who is not root: ``podman run --user 1000``, OpenShift's random
uid (no passwd entry), a state directory that cannot be written. Everything runs as that
user, the control API listens where it can, a probe beside it finds it, and nothing is
lost but what cannot be kept (said once)."""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.hooks.support import add_hook
from tests.support.harness import run

PY = sys.executable


def as_uid(uid: int, gid: int) -> Callable[[], None]:
    def drop() -> None:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    return drop


def owned_dir(uid: int, gid: int, mode: int = 0o755) -> Path:
    path = Path(tempfile.mkdtemp(prefix="initd-nonroot-", dir="/tmp"))
    os.chown(path, uid, gid)
    path.chmod(mode)
    return path


@pytest.fixture
def made() -> Iterator[list[Path]]:
    paths: list[Path] = []
    yield paths
    for path in paths:
        if path.is_symlink():
            path.unlink()
        else:
            shutil.rmtree(path, ignore_errors=True)


def environment(home: Path, **extra: str) -> dict[str, str]:
    """A container's environment for the user: no INITD_SOCKET (the default decides)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("INITD_", "GIT_", "XDG_"))}
    return {**env, "HOME": str(home), "INITD_SOCKET": "", **extra}


def workspace(uid: int, gid: int, made: list[Path]) -> Path:
    ws = owned_dir(uid, gid)
    made.append(ws)
    add_hook(ws / ".discobot" / "hooks", "10-setup.sh", 'id -u > "$DISCOBOT_WORKSPACE/ran"',
             type="session")
    for path in (ws, *ws.rglob("*")):
        os.chown(path, uid, gid)
    return ws


AGENT_PROBE = ('echo "socket=$INITD_SOCKET"; id -u; cat ran; '
               f'env -u INITD_SOCKET {PY} -m initd health --timeout 5')


def test_a_user_initd_serves_in_its_runtime_dir_and_warns_once_about_user(
        agent_user: pwd.struct_passwd, made: list[Path]) -> None:
    uid, gid = agent_user.pw_uid, agent_user.pw_gid
    home, runtime = owned_dir(uid, gid), owned_dir(uid, gid, 0o700)
    made += [home, runtime]
    ws = workspace(uid, gid, made)
    # the image says INITD_USER=root: not root, initd runs everything as itself
    init = run(["--workspace", str(ws), "--session-id", "nonroot", "--", "sh", "-c",
                AGENT_PROBE], pidns=False, cwd=str(ws), preexec_fn=as_uid(uid, gid),
               env=environment(home, XDG_RUNTIME_DIR=str(runtime), INITD_USER="root"))
    assert init.code == 0, init.stderr
    socket_line, me, ran, *health = init.stdout_lines
    assert socket_line == f"socket={runtime}/initd.sock"
    assert me == ran == str(uid)  # the agent and its session hook, as that user
    assert json.loads("\n".join(health))["status"] == "ok"  # the probe found it alone
    warned = [line for line in init.stderr.splitlines() if "not root" in line]
    assert len(warned) == 1 and f"run as uid {uid}, not as user 'root'" in warned[0]
    assert (home / ".discobot" / "nonroot" / "hooks" / "status.json").is_file()


def test_without_a_runtime_dir_the_socket_is_in_a_tmp_dir_of_its_own(
        agent_user: pwd.struct_passwd, made: list[Path]) -> None:
    uid, gid = agent_user.pw_uid, agent_user.pw_gid
    home = owned_dir(uid, gid)
    mine = Path(f"/tmp/initd-{uid}")
    made += [home, mine]
    ws = workspace(uid, gid, made)
    init = run(["--workspace", str(ws), "--", "sh", "-c", AGENT_PROBE], pidns=False,
               cwd=str(ws), preexec_fn=as_uid(uid, gid), env=environment(home))
    assert init.code == 0, init.stderr
    assert init.stdout_lines[0] == f"socket={mine}/initd.sock"
    info = mine.lstat()
    assert (info.st_uid, oct(info.st_mode & 0o777)) == (uid, "0o700")
    assert not [line for line in init.stderr.splitlines() if "not root" in line]


@pytest.mark.parametrize("trap", ["another user's directory", "a link"])
def test_a_tmp_dir_someone_else_made_first_is_not_used(
        agent_user: pwd.struct_passwd, made: list[Path], trap: str) -> None:
    """Another user made /tmp/initd-UID first, to be the one the agent talks to: initd
    will not listen there; the agent runs all the same, without INITD_SOCKET."""
    uid, gid = agent_user.pw_uid, agent_user.pw_gid
    home = owned_dir(uid, gid)
    mine = Path(f"/tmp/initd-{uid}")
    made += [home, mine]
    theirs = owned_dir(65534, 65534, 0o777)
    made.append(theirs)
    if trap == "a link":
        mine.symlink_to(theirs)
    else:
        mine.mkdir()
        os.chown(mine, 65534, 65534)
        mine.chmod(0o777)
    ws = workspace(uid, gid, made)
    init = run(["--workspace", str(ws), "--", "sh", "-c", 'echo "socket=$INITD_SOCKET"'],
               pidns=False, cwd=str(ws), preexec_fn=as_uid(uid, gid), env=environment(home))
    assert init.code == 0, init.stderr
    assert init.stdout_lines == ["socket="]  # no service, and the agent is not told one
    [line] = [line for line in init.stderr.splitlines() if "hook service not started" in line]
    assert f"cannot listen in /tmp/initd-{uid}" in line
    assert list(theirs.iterdir()) == []  # nothing of ours went there


def test_a_random_uid_with_no_passwd_entry_runs(made: list[Path]) -> None:
    """OpenShift's arbitrary uid: no passwd entry, gid 0, the image's INITD_USER=agent."""
    uid = 1_000_000_000 + secrets.randbelow(10**8)
    home = owned_dir(uid, 0, 0o770)
    made.append(home)
    ws = workspace(uid, 0, made)
    init = run(["--workspace", str(ws), "--", "sh", "-c", AGENT_PROBE], pidns=False,
               cwd=str(ws), preexec_fn=as_uid(uid, 0),
               env=environment(home, INITD_USER="agent-of-the-image"))
    made.append(Path(f"/tmp/initd-{uid}"))
    assert init.code == 0, init.stderr
    _, me, ran, *health = init.stdout_lines
    assert me == ran == str(uid)
    assert json.loads("\n".join(health))["status"] == "ok"
    assert "not as user 'agent-of-the-image'" in init.stderr
    assert "Traceback" not in init.stderr


def test_state_that_cannot_be_written_is_said_once_and_nothing_else_stops(
        agent_user: pwd.struct_passwd, made: list[Path]) -> None:
    """HOME is root's (a --read-only root, or HOME=/ for a random uid): one line names the
    directory and the fix; the session hook and the agent run; health says degraded."""
    uid, gid = agent_user.pw_uid, agent_user.pw_gid
    home, runtime = owned_dir(0, 0), owned_dir(uid, gid, 0o700)
    made += [home, runtime]
    ws = workspace(uid, gid, made)
    init = run(["--workspace", str(ws), "--", "sh", "-c", f"{AGENT_PROBE}; exit 7"],
               pidns=False, cwd=str(ws), preexec_fn=as_uid(uid, gid),
               env=environment(home, XDG_RUNTIME_DIR=str(runtime)))
    assert init.code == 7, init.stderr  # the agent's own exit code
    _, me, ran, *health = init.stdout_lines
    assert me == ran == str(uid)  # the session hook ran
    answer = json.loads("\n".join(health))
    assert answer["status"] == "degraded"
    problem, *consequences = answer["problems"]  # (and what it costs: the journal)
    assert f"{home}/.discobot cannot be written (Permission denied)" in problem
    assert all("request journal" in why for why in consequences), answer["problems"]
    said = [line for line in init.stderr.splitlines() if "cannot be written" in line]
    assert len(said) == 1 and "--state-dir/INITD_STATE_DIR" in said[0], init.stderr
    assert "Traceback" not in init.stderr
    assert list(home.iterdir()) == []


def test_a_state_dir_volume_of_roots_is_made_the_agents(
        agent_user: pwd.struct_passwd, made: list[Path]) -> None:
    """--state-dir on a fresh volume (root's, empty): root makes the session's directories
    for the agent at boot, and the agent's own verbs find them (INITD_STATE_DIR)."""
    uid = agent_user.pw_uid
    volume = owned_dir(0, 0)
    ws = workspace(uid, agent_user.pw_gid, made)
    made.append(volume)
    init = run(["--user", agent_user.pw_name, "--workspace", str(ws), "--session-id", "vol",
                "--state-dir", str(volume), "--", "sh", "-c",
                f'echo "$INITD_STATE_DIR"; {PY} -m initd health --timeout 30 >/dev/null; '
                f'{PY} -m initd sessions --json'],  # (once the service, beside, has begun)
               cwd=str(ws), env={k: v for k, v in environment(Path("/root")).items()
                                 if k != "INITD_SOCKET"})  # root's: the harness's own
    assert init.code == 0, init.stderr
    assert init.stdout_lines[0] == str(volume)
    [record] = json.loads("\n".join(init.stdout_lines[1:]))
    assert record["id"] == "vol"
    for sub in ("vol/hooks/status.json", "vol/hooks/output", "vol/events", "sessions"):
        assert (volume / sub).stat().st_uid == uid, sub
    assert not Path(agent_user.pw_dir, ".discobot", "vol").exists()
    status = json.loads((volume / "vol" / "hooks" / "status.json").read_text())
    assert status["hooks"]["10-setup"]["lastResult"] == "success"


def test_with_state_in_memory_turns_and_outputs_still_work(
        agent_user: pwd.struct_passwd, made: list[Path]) -> None:
    """The same unwritable state: the hook service keeps status in its memory, so a turn
    runs the file hooks, a failure re-prompts, its output is there; no internal error."""
    uid, gid = agent_user.pw_uid, agent_user.pw_gid
    home, runtime = owned_dir(0, 0), owned_dir(uid, gid, 0o700)
    made += [home, runtime]
    ws = workspace(uid, gid, made)
    add_hook(ws / ".discobot" / "hooks", "20-check.sh",
             'cat $DISCOBOT_CHANGED_FILES_LIST | tr "\\0" " "; grep -l bad '
             '$DISCOBOT_CHANGED_FILES && exit 1; echo clean', type="file", pattern="*.py")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    for path in (ws, *ws.rglob("*")):
        os.chown(path, uid, gid, follow_symlinks=False)
    script = (f"echo bad > x.py; {PY} -m initd turn >/dev/null; echo turn=$?; "
              f"{PY} -m initd hooks output 20-check; echo fixed > x.py; "
              f"{PY} -m initd turn >/dev/null; echo turn=$?")
    init = run(["--workspace", str(ws), "--", "sh", "-c", script], pidns=False,
               cwd=str(ws), preexec_fn=as_uid(uid, gid),
               env=environment(home, XDG_RUNTIME_DIR=str(runtime)))
    assert init.code == 0, init.stderr
    assert init.stdout_lines == ["turn=2", "x.py x.py", "turn=0"], init.stderr
    assert "internal error" not in init.stderr and "Traceback" not in init.stderr
