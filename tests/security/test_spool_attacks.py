"""The hook service's spool attacked as the agent (initd/http/spool.py): the agent owns the
service's state directory, so it plants a link, a FIFO, a file or a closed directory
where the spool goes, fills the disk under it, and sends huge, garbled and cut bodies,
many at once. The service must not hang, crash or keep a spooled file past its request,
and a guard never passes: a payload it could not keep is that event's block (``initd
emit`` exits 2, invariant 12), never a success. initd as PID 1, ``--user`` the agent,
its real socket; every attack runs as the agent (CMD)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import tmpfs
from tests.support.attack import Agent, Canary, agent_script

# a nyzhi guard that reads the event and blocks it: "no" is the guard's own answer
GUARD = ('[[agent.hooks]]\nevent = "pre_tool"\ncommand = "cat >/dev/null; echo no >&2; '
         'exit 1"\nblock = true\n')

COMMON = """
    import json, os, socket, subprocess, sys, threading, time
    from tests.support.agent_side import call, service_pid

    def emit(size, char="x"):
        data = json.dumps({"tool_name": "Write", "tool_input": {"file_path": "a.py",
                                                               "content": char * size}})
        done = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data",
                               "-"], input=data, capture_output=True, text=True,
                              timeout=60)
        return [done.returncode, done.stderr.strip()[-400:]]

    def fds(pid):
        return sorted(os.readlink(f"/proc/{pid}/fd/{n}") for n in os.listdir(f"/proc/{pid}/fd"))
"""

PLANT = COMMON + """
    sid, kind, target = sys.argv[1:4]
    spool = os.path.expanduser(f"~/.discobot/{sid}/spool")
    pid = service_pid()
    first = emit(2**20)  # the spool made and used once, as the agent finds it
    os.rmdir(spool)
    if kind == "link":
        os.symlink(target, spool)
    elif kind == "fifo":
        os.mkfifo(spool)
    elif kind == "file":
        open(spool, "w").close()
    else:
        os.mkdir(spool, 0)
    print(json.dumps({"first": first, "big": emit(2**20), "small": emit(1000),
                      "same": service_pid() == pid}), flush=True)
"""


def guarded(ws: Path, agent: Agent) -> None:
    (ws / ".nyzhi").mkdir()
    (ws / ".nyzhi" / "config.toml").write_text(GUARD)
    for path in (ws / ".nyzhi", ws / ".nyzhi" / "config.toml"):
        os.chown(path, agent.uid, agent.gid)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["link", "fifo", "file", "closed"])
def test_what_the_agent_plants_where_the_spool_goes_blocks_and_hangs_nothing(
        boot, agent: Agent, ws: Path, sid: str, canary: Canary, kind: str) -> None:
    guarded(ws, agent)
    init = boot(sys.executable, agent_script(PLANT), sid, kind, str(canary.dir))
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    seen = json.loads(init.stdout_lines[-1])
    assert seen["first"] == [2, "initd: blocked: no"], seen  # the guard's own answer
    code, said = seen["big"]
    assert code == 2 and "could not be kept" in said and "HTTP 503" in said, seen
    assert seen["small"] == [2, "initd: blocked: no"], seen  # in memory: the guard saw it
    assert seen["same"], "the hook service was restarted"
    assert canary.changes() == []


FILL = COMMON + """
    state = sys.argv[1]
    pid = service_pid()
    filler = os.open(os.path.join(state, "filler"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(filler, b"\\0" * 65536):
            pass
    except OSError:
        pass  # full
    os.close(filler)
    full = emit(2**20)
    os.unlink(os.path.join(state, "filler"))
    print(json.dumps({"full": full, "freed": emit(2**20), "same": service_pid() == pid,
                      "left": [f for f in fds(pid) if "(deleted)" in f]}), flush=True)
"""


@pytest.fixture
def small_disk(agent: Agent) -> Iterator[Path]:
    """A 4 MiB tmpfs of the agent's, for its initd's state (--state-dir)."""
    with tmpfs.mounted(f"size=4m,mode=0755,uid={agent.uid},gid={agent.gid}",
                       "initd-spool-disk-") as path:
        yield path


@pytest.mark.slow
def test_a_full_disk_under_the_spool_blocks_until_it_is_freed(
        boot, agent: Agent, ws: Path, small_disk: Path) -> None:
    guarded(ws, agent)
    init = boot(sys.executable, agent_script(FILL), str(small_disk),
                more=("--state-dir", str(small_disk)))
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    seen = json.loads(init.stdout_lines[-1])
    code, said = seen["full"]
    assert code == 2 and "No space left on device" in said and "HTTP 503" in said, seen
    assert seen["freed"] == [2, "initd: blocked: no"], seen
    assert seen["same"] and seen["left"] == [], seen


FLOOD = COMMON + """
    sid = sys.argv[1]
    MiB = 2**20
    pid = service_pid()
    before = fds(pid)
    write = lambda text: json.dumps({"tool_name": "Write", "tool_input": {
        "file_path": "a.py", "content": text}}).encode()
    BODIES = {
        "write": write("x" * (6 * MiB)),
        "escapes": write("\\"\\\\\\n\\u00e9\\U0001f600" * (MiB // 3)),
        "deep": b"[" * (4 * MiB),
        "values": b"[" + b"{}," * MiB + b"{}]",
        "unclosed": b'{"a": "' + b"x" * (4 * MiB),
        "not utf-8": b'{"a": "' + b"\\xff" * (4 * MiB) + b'"}',
        "garbage": os.urandom(4 * MiB),
    }
    answers = {}

    def send(name, body, cut=False):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(60)
        s.connect(os.environ["INITD_SOCKET"])
        head = f"POST /v1/events/pre_tool HTTP/1.0\\r\\nContent-Length: {len(body)}\\r\\n\\r\\n"
        try:
            s.sendall(head.encode() + (body[: len(body) // 2] if cut else body))
            if cut:
                s.close()  # gone halfway: its file must go with it
                answers[name] = "cut"
                return
            got = b""
            while chunk := s.recv(65536):
                got += chunk
            code = int(got.split(b" ", 2)[1])
            blocked = json.loads(got.partition(b"\\r\\n\\r\\n")[2]).get("blocked")
            answers[name] = [code, blocked]
        except OSError as err:
            answers[name] = type(err).__name__
        finally:
            s.close()

    threads = [threading.Thread(target=send, args=(f"{name} {n}", body, n == 2))
               for n in range(3) for name, body in BODIES.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    time.sleep(0.5)  # (the cut ones: dropped once the service reads their end)
    with open(f"/proc/{pid}/status") as f:
        hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM"))
    print(json.dumps({"answers": answers, "same": service_pid() == pid,
                      "guard": emit(2 * MiB), "leaked": sorted(set(fds(pid)) - set(before)),
                      "names": os.listdir(os.path.expanduser(f"~/.discobot/{sid}/spool")),
                      "hwm": hwm}), flush=True)
"""


@pytest.mark.slow
def test_many_huge_and_garbled_bodies_at_once_pass_no_guard_and_leave_nothing(
        boot, agent: Agent, ws: Path, sid: str) -> None:
    guarded(ws, agent)
    init = boot(sys.executable, agent_script(FLOOD), sid)
    assert init.wait(timeout=180) == 0, init.stderr[-3000:]
    seen = json.loads(init.stdout_lines[-1])
    answers = seen["answers"]
    assert len(answers) == 21 and all(
        a == "cut" or (isinstance(a, list) and (a[0] != 200 or a[1] is True))
        for a in answers.values()), answers  # blocked, or not taken: never let through
    assert any(a == [200, True] for a in answers.values()), answers  # (and some seen)
    assert seen["same"], "the hook service was restarted"
    assert seen["guard"] == [2, "initd: blocked: no"], seen
    assert seen["leaked"] == [] and seen["names"] == [], seen  # no file held, none named
    assert seen["hwm"] < 200 * 1024, seen  # KiB: 21 bodies of 4-12 MiB, 150 MiB in all
