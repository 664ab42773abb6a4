"""Red-team attempts on the supervisor's loop, the stop, the private channel, the probe
port and what root's verbs read from the agent's service (invariants 3, 9, 13), made as
the agent user (tests/security/test_redteam.py says how these files are built).

An attack that worked when this round was made is marked ``# Once worked: …`` on the line
above its test (each failed on the code before its fix); one that was stopped pins the
defence. Deadlines are on events (a line, an exit), set far from both outcomes, never on
wall-clock time measured for its own sake.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.support.attack import Agent, agent_script, as_agent, hook
from tests.support.harness import ns_pid, wait_for
from tests.support.redteam import HOOKS, records


@pytest.fixture
def record() -> Iterator[Path]:
    yield from records()


# --------------------------------------------------------------------------------------
# Invariants 3 and 9: the supervisor's loop. An event hook runs in the hook service's
# session, so it may join the service's own process group (setpgid within a session),
# ignoring TERM. When the agent then kills its service, the supervisor stops what is
# left of that group, TERM, grace, KILL: is its loop (signals passed on, the stop
# signal) held meanwhile?

@pytest.fixture
def marks(agent: Agent) -> Iterator[Path]:
    """A directory the agent's processes write to (MARKS in their code): what they saw,
    and when, by order alone."""
    path = Path(tempfile.mkdtemp(prefix="initd-atk-marks-"))
    os.chown(path, agent.uid, agent.gid)
    yield path
    shutil.rmtree(path, ignore_errors=True)


# The member records the first TERM it is sent (its pid, in MARKS/term), and ignores it.
# Its group and its session are stopped at once, so a second TERM may interrupt the
# handler: each call writes a file of its own (a shared name, renamed twice, once raised
# in the member and ended it, and the test saw it "gone").
JOIN_SERVICE_GROUP = (
    "/usr/bin/python3 -c 'import os, signal, time\n"
    "def term(*_):\n"
    "    tmp = \"MARKS/term.%d.tmp\" % time.monotonic_ns()\n"
    "    with open(tmp, \"w\") as f: f.write(str(os.getpid()))\n"
    "    if not os.path.exists(\"MARKS/term\"): os.rename(tmp, \"MARKS/term\")\n"
    "signal.signal(signal.SIGTERM, term)\n"
    "os.setpgid(0, os.getsid(0))\n"
    "time.sleep(1000)' </dev/null >/dev/null 2>&1 &")

KILL_SERVICE = """
    import os, signal, subprocess, sys, time
    from tests.support.agent_side import service_pid

    def alive(pid):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
        except OSError:
            return False

    service = service_pid()
    subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data", "{}"],
                   capture_output=True, timeout=60)

    def joined():
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) != service:
                try:
                    with open(f"/proc/{name}/stat", "rb") as f:
                        fields = f.read().rsplit(b")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[2]) == service:
                    return True
        return False

    deadline = time.monotonic() + 60
    while not joined() and time.monotonic() < deadline:
        time.sleep(0.05)
    print("joined" if joined() else "not joined", flush=True)
    os.kill(service, signal.SIGKILL)
    print("service killed", flush=True)
    # The supervisor has seen the service's exit once it stops what is left of its group.
    deadline = time.monotonic() + 60
    while not os.path.exists("MARKS/term") and time.monotonic() < deadline:
        time.sleep(0.01)
    if not os.path.exists("MARKS/term"):
        print("the member got no TERM", flush=True)
        sys.exit(3)
    member = int(open("MARKS/term").read())
    got = []
    signal.signal(signal.SIGUSR1, lambda *_: got.append(alive(member)))
    print("member got TERM", flush=True)
    deadline = time.monotonic() + 120
    while not got and time.monotonic() < deadline:
        time.sleep(0.01)
    if not got:
        print("no USR1", flush=True)
    elif got[0]:
        print("got USR1 while the member lived", flush=True)
    else:
        print("got USR1 after the member was gone", flush=True)
    sys.exit(7)
"""


# Once worked: the supervisor's loop waits out the grace in tick(): no signal passed on meanwhile
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_killed_service_with_a_member_ignoring_term_never_holds_the_supervisors_loop(
        boot, agent: Agent, ws: Path, marks: Path) -> None:
    """USR1 is sent once the supervisor has begun stopping what the killed service left
    (its member got TERM). A free loop passes it on while the member still lives (KILL
    comes at the end of the 30 s grace); a held loop only once the member is gone, KILLed:
    the order tells them apart, whatever the host's speed."""
    hook(ws / Path(*HOOKS), "10-join.sh", JOIN_SERVICE_GROUP.replace("MARKS", str(marks)),
         owner=agent, type="pre_tool")
    init = boot(sys.executable, agent_script(KILL_SERVICE.replace("MARKS", str(marks))),
                more=("--grace", "30"))
    init.expect("^joined$", timeout=60)
    init.expect("^member got TERM$", timeout=120)
    init.signal(signal.SIGUSR1)
    seen = init.expect("^(got USR1.*|no USR1)$", timeout=180)
    assert seen.group(1) == "got USR1 while the member lived", init.stderr[-3000:]
    # The order is proven: the rest of the grace proves nothing, so the member goes now
    # (it wrote its pid as initd's namespace sees it).
    member = int((marks / "term").read_text())
    for process in init.descendants():
        if ns_pid(process.pid) == member:
            with contextlib.suppress(psutil.Error):  # (gone meanwhile)
                process.kill()
    assert init.wait(timeout=120) == 7, init.stderr[-3000:]


# The stop: the agent's CMD exits at once on TERM, leaving the whole grace to the hook
# service, which the agent has stopped (SIGSTOP: it cannot exit on TERM) and whose
# session holds a process that ignores TERM (left by an event hook, in a group of its
# own). The service takes what is left of the grace; what it left then takes a grace
# of its own again. The process left in the session records, when it gets its TERM,
# what the service is then (MARKS/term: "T", still stopped, in its grace; "Z" or "gone"
# once KILLed), and says it is set up (MARKS/ready: its session) first.

LEAVE_IN_SESSION = (
    "/usr/bin/python3 -c 'import os, signal, time\n"
    "def term(*_):\n"
    "    try:\n"
    "        with open(\"/proc/%d/stat\" % os.getsid(0), \"rb\") as f:\n"
    "            state = f.read().rsplit(b\")\", 1)[1].split()[0].decode()\n"
    "    except OSError:\n"
    "        state = \"gone\"\n"
    "    tmp = \"MARKS/term.%d.tmp\" % time.monotonic_ns()  # (a second TERM: above)\n"
    "    with open(tmp, \"w\") as f: f.write(state)\n"
    "    if not os.path.exists(\"MARKS/term\"): os.rename(tmp, \"MARKS/term\")\n"
    "signal.signal(signal.SIGTERM, term)\n"
    "os.setpgid(0, 0)\n"
    "with open(\"MARKS/ready.tmp\", \"w\") as f: f.write(str(os.getsid(0)))\n"
    "os.rename(\"MARKS/ready.tmp\", \"MARKS/ready\")\n"
    "time.sleep(1000)' </dev/null >/dev/null 2>&1 &")

STOP_SERVICE_ON_TERM = """
    import os, signal, subprocess, sys, time
    from tests.support.agent_side import service_pid

    service = service_pid()
    subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data", "{}"],
                   capture_output=True, timeout=60)

    def state(pid):
        with open("/proc/%d/stat" % pid, "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0].decode()

    def stop(*_):
        # SIGSTOP is queued, not done: the service stops only once it is scheduled, and
        # on a busy host that can be after this exit and initd's TERM (both pending, the
        # TERM is taken first). Exit once it is stopped, as the premise says.
        os.kill(service, signal.SIGSTOP)
        deadline = time.monotonic() + 60
        while state(service) != "T" and time.monotonic() < deadline:
            time.sleep(0.001)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    deadline = time.monotonic() + 60  # (the hook's process has set itself up)
    while not os.path.exists("MARKS/ready") and time.monotonic() < deadline:
        time.sleep(0.01)
    if not os.path.exists("MARKS/ready"):
        print("not armed: the hook's process never said it was ready", flush=True)
    elif int(open("MARKS/ready").read()) != service:
        print("not armed: the hook's process is not in the service's session", flush=True)
    else:
        print("armed", flush=True)
    time.sleep(1000)
"""
STOP_GRACE = 10.0


# Once worked: a stopped service, then what it left, each take a grace: the stop takes two
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_service_and_what_it_left_share_one_grace_at_the_stop(
        boot, agent: Agent, ws: Path, marks: Path) -> None:
    """One grace for both (docs/cli.md, "How initd runs CMD"): what the service left in its
    session gets its TERM while the service itself is still in its grace (stopped, not
    yet KILLed). Two graces, one after the other, TERM it only once the service is
    gone: the order tells them apart, whatever the host's speed. (The wait is only a
    guard against a stop that never ends, past both.)"""
    hook(ws / Path(*HOOKS), "10-leave.sh", LEAVE_IN_SESSION.replace("MARKS", str(marks)),
         owner=agent, type="pre_tool")
    init = boot(sys.executable, agent_script(STOP_SERVICE_ON_TERM.replace("MARKS", str(marks))),
                more=("--grace", str(STOP_GRACE)))
    init.expect("^armed$", timeout=60)
    init.signal(signal.SIGTERM)
    term = marks / "term"
    wait_for(term.exists, timeout=4 * STOP_GRACE + 60, what="the TERM of what the service left")
    state = term.read_text()
    # The order is seen: the rest of the grace proves nothing, so the agent's processes go now.
    for process in init.descendants():
        with contextlib.suppress(psutil.Error):  # (gone meanwhile)
            if process.uids().real == agent.uid:
                process.kill()
    init.wait(timeout=4 * STOP_GRACE + 60)
    assert state == "T", (f"what the service left got its TERM only once the service was "
                          f"{state!r} (not 'T', stopped in its grace): a second grace")

# --------------------------------------------------------------------------------------
# The probe port (anyone on the pod's network): root's one thread answers each request
# itself, and a 404 repeats the path. A 16 KiB path of backslashes makes a ~32 KiB answer
# (JSON doubles each); a client whose receive window is tiny and that never reads holds
# that thread in sendall for its write timeout (10 s), and the next such client again.

def test_a_client_that_never_reads_a_long_404_cannot_hold_the_probes(boot) -> None:  # type: ignore[no-untyped-def]
    import socket

    from tests.support.probes import boot_with_probes, get

    init, port = boot_with_probes(lambda p: boot("sleep", "120",
                                                 more=("--health-port", str(p))))
    request = b"GET /" + b"\\" * 16_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    # Over loopback a send never blocks, so what pins the defence is what it rests on:
    # the answer to a 16 KB path is small (the path is never echoed whole: once, 32 KB,
    # over a fresh TCP socket's 16 KiB buffer), and the reading thread never waits for a
    # client to take it (http/server.py: INLINE_WRITE).
    with socket.create_connection(("127.0.0.1", port), timeout=10) as reader:
        reader.sendall(request)
        answer = b""
        while chunk := reader.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.0 404") and len(answer) < 1024, len(answer)
    held = []
    try:
        for _ in range(4):
            conn = socket.socket()
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
            conn.connect(("127.0.0.1", port))
            conn.sendall(request)
            held.append(conn)
        time.sleep(0.5)
        code, _ = get(port, timeout=4)
        assert code == 200, "the probe got no answer while 4 clients did not read theirs"
    finally:
        for conn in held:
            conn.close()
    init.signal(signal.SIGTERM)
    init.wait(timeout=30)

# --------------------------------------------------------------------------------------
# Root's exec probes and verbs read what the agent's service answers. JSON nested past
# Python's recursion limit raises RecursionError, which is not a ValueError.

DEEP_SERVER = r"""
import os, socket, sys
path, status = sys.argv[1], sys.argv[2]
listener = socket.socket(socket.AF_UNIX)
listener.bind(path)
os.chmod(path, 0o777)
listener.listen(8)
print("serving", flush=True)
body = b"[" * 100000 + b"]" * 100000
while True:
    conn, _ = listener.accept()
    conn.recv(65536)
    conn.sendall(b"HTTP/1.0 " + status.encode() + b" X\r\nContent-Length: %d\r\n\r\n"
                 % len(body) + body)
    conn.close()
"""


# Once worked: root's probes and verbs raise RecursionError (a traceback) on deep JSON
@pytest.mark.parametrize(("verb", "status"), [("ready", "503"), ("health", "503"),
                                              ("status", "200"), ("status", "503")])
def test_a_deeply_nested_answer_is_one_line_never_a_traceback(
        agent: Agent, verb: str, status: str) -> None:
    path = os.path.join(agent.home, f"deep-{os.urandom(4).hex()}.sock")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "INITD_"))}
    server = subprocess.Popen(["runuser", "-u", agent.name, "--", sys.executable, "-c",
                               DEEP_SERVER, path, status], stdout=subprocess.PIPE, text=True,
                              env={**env, "HOME": agent.home})
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "serving"
        out = subprocess.run([sys.executable, "-m", "initd", verb, "--socket", path],
                             capture_output=True, text=True, timeout=60, env=env)
    finally:
        server.kill()
        server.wait(10)
        if os.path.exists(path):
            os.unlink(path)
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    assert len(out.stderr.splitlines()) <= 1, out.stderr[-2000:]
    assert out.returncode in (1, 125), out

# --------------------------------------------------------------------------------------
# The channel's trust op only asks: a forged one with any digest is refused, and the
# store is unchanged.

TRUST_OP = """
    import json, sys
    import os, signal
    from tests.support.agent_side import channel_of, service_pid, stop
    service = service_pid()
    channel = channel_of(service)
    stop(service)  # (every thread of it stopped: the reply comes to us, not to it)
    channel.settimeout(30)
    key, digest = sys.argv[1], sys.argv[2]
    message = {"op": "trust", "id": 3, "key": key, "digest": digest}
    channel.sendall(json.dumps(message).encode() + b"\\n")
    got = b""
    while b'"reply"' not in got:
        chunk = channel.recv(65536)
        if not chunk:
            break
        got += chunk
    for line in got.splitlines():
        if b'"reply"' in line:
            print(line.decode(), flush=True)
    os.kill(service, signal.SIGCONT)
"""


def test_a_forged_trust_question_approves_nothing(boot, agent: Agent, ws: Path,
                                                  record: Path, image: str) -> None:
    path = hook(ws / Path(*HOOKS), "10-user.sh", "true", owner=agent, type="session")
    store = record / "store" / "trust.json"
    subprocess.run([sys.executable, "-m", "initd", "hooks", "trust", "--workspace", str(ws),
                    "--hooks-dir", image, "--user", agent.name, "--trust-file", str(store)],
                   capture_output=True, timeout=60, cwd="/", check=True)
    before = store.read_bytes()
    init = boot(sys.executable, agent_script(TRUST_OP), str(path), "0" * 64,
                more=("--trust", "--trust-file", str(store)))
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    reply = json.loads(init.stdout_lines[-1])
    assert reply["trusted"] is False
    assert store.read_bytes() == before

# --------------------------------------------------------------------------------------
# The channel: odd but well-formed messages.

ODD_OPS = """
    import os, signal, sys, time
    from tests.support.agent_side import channel_of, ready, service_pid
    got = []
    signal.signal(signal.SIGUSR1, lambda *_: got.append(1))
    first = service_pid()
    channel = channel_of(first)
    payload = sys.argv[1].encode().decode("unicode_escape").encode("latin-1")
    channel.sendall(payload * int(sys.argv[2]))
    time.sleep(1)
    print("sent", flush=True)
    deadline = time.monotonic() + 20
    while not got and time.monotonic() < deadline:
        time.sleep(0.01)
    print("got USR1" if got else "no USR1", flush=True)
    sys.exit(7)
"""
ODD = {
    "a boolean id": ('{"op": "cancel", "id": true}\\n', 1),
    "a float id": ('{"op": "precommit", "id": 1.0}\\n', 1),
    "an id past 64 bits": ('{"op": "precommit", "id": ' + "9" * 40 + '}\\n', 1),
    "ready again and again": ('{"op": "ready"}\\n', 5000),
    "a reply of our own": ('{"op": "reply", "id": 1, "result": "x"}\\n', 1),
    "a state of our own": ('{"op": "state", "agent": {"ready": true}}\\n', 1),
    "the same id twice": ('{"op": "precommit", "id": 5}\\n', 2),
    "a NUL key": ('{"op": "trust", "id": 2, "key": "\\\\u0000", "digest": "' + "0" * 64
                  + '"}\\n', 1),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ODD))
def test_odd_channel_messages_never_hurt_the_supervisor(boot, name: str) -> None:
    payload, repeat = ODD[name]
    init = boot(sys.executable, agent_script(ODD_OPS), payload, str(repeat),
                more=("--grace", "1"))
    init.expect("^sent$", timeout=60)
    init.signal(signal.SIGUSR1)
    init.expect("^got USR1$", timeout=20)
    assert init.wait(timeout=60) == 7, init.stderr[-3000:]
    assert "Traceback" not in init.stderr, init.stderr[-3000:]

# --------------------------------------------------------------------------------------
# Boot runs git as the agent (the repository check, the chain, safe.directory), each
# call with a 30 s timeout. A FIFO where git reads its config (planted on a volume by
# the last agent) makes each call wait its whole timeout: is the stop signal honoured
# meanwhile, within the grace and the sweep?

# Once worked: boot's git calls (30 s timeout each) hold the stop signal until they end
@pytest.mark.parametrize("where", [".git/config", "home .gitconfig"])
def test_a_fifo_git_blocks_on_never_delays_the_stop(boot, agent: Agent, ws: Path,
                                                    where: str) -> None:
    if where == ".git/config":
        as_agent(agent, f"rm {ws}/.git/config && mkfifo {ws}/.git/config")
    else:  # the agent's own ~/.gitconfig: read by every git call run as the agent
        as_agent(agent, "rm -f ~/.gitconfig && mkfifo ~/.gitconfig")
    try:
        init = boot("sleep", "100", more=("--grace", "2"))
        wait_for(lambda: any("git" in p.name() for p in init.descendants()), timeout=30,
                 what="boot's git")
        init.signal(signal.SIGTERM)
        try:
            init.wait(timeout=2 + 0.5 + 2 + 5)
        except subprocess.TimeoutExpired:
            pytest.fail("initd's stop waited for boot's git calls (30 s each)")
    finally:
        as_agent(agent, "rm -f ~/.gitconfig")

# --------------------------------------------------------------------------------------
# An operator, as root at a terminal, reads what the agent's hooks printed, through the
# agent's service: `initd hooks output ID` (and `initd status`).

WAIT_READY = """
    from tests.support.agent_side import ready
    import time
    print("ready" if ready() else "not ready", flush=True)
    time.sleep(60)
"""


# Once worked (the [hooks output] case): `initd hooks output` as root wrote the log raw,
# escapes and all
@pytest.mark.parametrize("verb", [("hooks", "output", "10-x"), ("status",)],
                         ids=["hooks output", "status"])
def test_root_reading_a_hooks_output_gets_no_terminal_escape(
        boot, agent: Agent, ws: Path, verb: tuple[str, ...]) -> None:
    hook(ws / Path(*HOOKS), "10-x.sh",
         "printf 'ok\\033]52;c;cm0gLXJmIH4K\\007\\033]0;owned\\007\\033[2J\\n'",
         owner=agent, type="session")
    init = boot(sys.executable, agent_script(WAIT_READY))
    init.expect("^ready$", timeout=60)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "INITD_"))}
    out = subprocess.run([sys.executable, "-m", "initd", *verb, "--socket", init.socket],
                         capture_output=True, text=True, timeout=60, env=env)
    init.kill()
    assert out.returncode == 0, out.stderr
    assert "ok" in out.stdout
    assert "\x1b" not in out.stdout + out.stderr
