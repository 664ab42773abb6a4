"""Root runs the workspace's code only before the agent runs (ARCHITECTURE.md, invariant
11). Each test is an attack that once worked, made by the agent against root-owned
canaries: a root file hook fed a file list the agent swapped for a link, or absolute
paths from a hand-written git index; a root hook importing the agent's ``json.py`` from
its working directory; a root daemon a workspace hook left running, on inputs the agent
controls. None of them reaches root now: a root file hook is refused when it loads, every
hook gets ``PYTHONSAFEPATH=1``, and what a workspace's root session hook leaves running
as root is stopped before the agent starts."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.attack import Agent, Canary, agent_script, as_agent, hook

# A root file hook that shows what it was given: its changed-file list (the NUL file the
# spec's DISCOBOT_CHANGED_FILES_LIST names) or the files themselves, in its log, which
# the agent reads.
SHOW_LIST = 'cat "$DISCOBOT_CHANGED_FILES_LIST"; echo "ran as $(id -u)"'
SHOW_FILES = 'for f in $DISCOBOT_CHANGED_FILES; do cat -- "$f"; done; echo "ran as $(id -u)"'
REFUSED = "run_as: root: file hooks run as the agent; move root work to a blocking session hook"

SWAP_LIST = """
    import json, os, sys, threading, time
    from tests.support.agent_side import call

    listing, secret, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    stop = threading.Event()

    def swap():  # the list root's hook is about to read becomes a link to root's secret
        while not stop.is_set():
            try:
                os.symlink(secret, listing + ".new")
                os.replace(listing + ".new", listing)
            except OSError:
                pass

    thread = threading.Thread(target=swap)
    thread.start()
    codes = [call("POST", "/v1/hooks/10-root/rerun")[0] for _ in range(rounds)]
    stop.set()
    thread.join()
    print(json.dumps(sorted(set(codes))), flush=True)
"""


def test_a_root_file_hooks_list_swapped_for_a_link_reaches_nothing(
        boot, agent: Agent, ws: Path, sid: str, canary: Canary) -> None:
    """The agent reruns a root file hook again and again while it swaps the hook's file
    list (``output/<id>.files``) for a link to a root 0600 file."""
    hook(ws / ".discobot" / "hooks", "10-root.sh", SHOW_LIST, owner=agent, type="file",
         pattern="*", run_as="root")
    as_agent(agent, f"echo x > {ws}/a.txt")
    listing = agent.state / sid / "hooks" / "output" / "10-root.files"
    init = boot(sys.executable, agent_script(SWAP_LIST), str(listing), str(canary.secret),
                "50")
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    assert canary.leaked_into(agent.home, ws) == []
    assert canary.changes() == []
    assert json.loads(init.stdout_lines[-1]) == [404]  # no such hook: it never loaded
    assert REFUSED in init.stderr


def git_index(*names: bytes) -> bytes:
    """A git index (version 2) listing ``names`` as empty files: written by hand, as the
    agent can, since ``git add`` refuses an absolute path."""
    empty_blob = bytes.fromhex("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")
    entries = b""
    for name in sorted(names):
        body = struct.pack(">10I", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0) + empty_blob + \
            struct.pack(">H", min(len(name), 0xFFF)) + name
        entries += body + b"\0" * (8 - len(body) % 8)
    data = b"DIRC" + struct.pack(">II", 2, len(names)) + entries
    return data + hashlib.sha1(data).digest()


RERUN = """
    import json
    from tests.support.agent_side import call
    code, answer = call("POST", "/v1/hooks/10-root/rerun")
    print(json.dumps(code), flush=True)
"""


def test_absolute_paths_from_a_hand_written_index_reach_no_root_hook(
        boot, agent: Agent, ws: Path, canary: Canary) -> None:
    """On an unborn branch the changed files come from the index, which the agent
    writes: an entry naming root's secret by its absolute path (and one climbing out)."""
    hook(ws / ".discobot" / "hooks", "10-root.sh", SHOW_FILES, owner=agent, type="file",
         pattern="**", run_as="root")
    index = git_index(str(canary.secret).encode(), b"../../" + str(canary.secret).encode())
    (ws / ".git" / "index").write_bytes(index)
    os.chown(ws / ".git" / "index", agent.uid, agent.gid)
    init = boot(sys.executable, agent_script(RERUN))
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    assert canary.leaked_into(agent.home, ws) == []
    assert init.stdout_lines[-1] == "404"


# Planted in the workspace (a volume keeps what the last container's agent wrote): a
# module a root hook's `python3 -c 'import json'` would import from its working directory.
PLANTED_JSON = """
import os
open({owned!r}, "w").write("imported as uid %d" % os.getuid())
raise ImportError("the agent's json")
"""
PY_HOOK = ('/usr/bin/python3 -c \'import json, sys; print(json.dumps({"root": True}))\' '
           '&& echo "ran as $(id -u)"')


def test_a_root_session_hook_never_imports_the_agents_module_from_its_cwd(
        boot, agent: Agent, ws: Path, sid: str, canary: Canary) -> None:
    owned = canary.dir / "owned"
    as_agent(agent, f"cat > {ws}/json.py <<'EOF'\n{PLANTED_JSON.format(owned=str(owned))}\n"
                    "EOF")
    hook(ws / ".discobot" / "hooks", "10-root.sh", PY_HOOK, owner=agent, type="session",
         run_as="root")
    init = boot("true")
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    assert not owned.exists()
    log = (agent.state / sid / "hooks" / "output" / "10-root.log").read_text()
    assert log.splitlines() == ['{"root": true}', "ran as 0"], log
    assert canary.changes() == []


# A root session hook of the workspace's leaves daemons: one watches the workspace for the
# agent's request and copies root's secret there; one drops to the agent first; one stays
# in the hook's own group. The image's hook leaves one too.
WATCHER = ('while :; do [ -e "{ws}/please" ] && cat {secret} > "{ws}/leak"; sleep 0.05{t}; '
           'done')
DAEMONS = (  # each names {t}, this test's own, so that a host's other sleeps never count
    "setsid sh -c '{watcher}' </dev/null >/dev/null 2>&1 &\n"
    "sh -c 'while :; do sleep 1.{t}; done' </dev/null >/dev/null 2>&1 &\n"
    "setsid setpriv --reuid={uid} --regid={gid} --clear-groups sleep 1000.{t} "
    "</dev/null >/dev/null 2>&1 &\n"
    "python3 -c 'import os, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        time.sleep(1000.{t})\n' </dev/null >/dev/null 2>&1\n"
)
AGENT = """
    import os, subprocess, sys, time
    ws, token = sys.argv[1], sys.argv[2]
    open(os.path.join(ws, "please"), "w").close()
    time.sleep(1)  # (the watcher looks every 50 ms)
    ps = subprocess.run(["ps", "-eo", "uid=,args="], capture_output=True, text=True).stdout
    print("leak" if os.path.exists(os.path.join(ws, "leak")) else "no leak", flush=True)
    for line in ps.splitlines():
        uid, _, args = line.strip().partition(" ")
        if token in args and "attack.py" not in args:  # (initd's and ours name it too)
            print(uid, args.strip(), flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("pidns", [True, False], ids=["pid1", "subreaper"])
def test_what_a_workspace_root_hook_leaves_running_as_root_is_stopped_before_the_agent(
        boot, agent: Agent, ws: Path, image: str, canary: Canary, pidns: bool) -> None:
    """As PID 1 of a PID namespace, and as a subreaper (its children re-parent to
    initd's reaper either way)."""
    t = f"{os.getpid() % 10000:04d}{len(str(ws)):02d}"
    watcher = WATCHER.format(ws=ws, secret=canary.secret, t=t)
    hook(ws / ".discobot" / "hooks", "10-root.sh", DAEMONS.format(
        watcher=watcher, uid=agent.uid, gid=agent.gid, t=t), owner=agent, type="session",
        run_as="root")
    hook(Path(image), "05-image.sh", f"setsid sleep 1001.{t} </dev/null >/dev/null 2>&1 &",
         type="session", run_as="root")
    init = boot(sys.executable, agent_script(AGENT), str(ws), t, pidns=pidns)
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    assert init.stdout_lines[0] == "no leak", init.stdout_lines
    left = init.stdout_lines[1:]
    root_left = [line for line in left if line.startswith("0 ")]
    # the image's daemon is the image author's; the workspace's are gone
    assert root_left == [f"0 sleep 1001.{t}"], left
    assert f"{agent.uid} sleep 1000.{t}" in left  # it dropped to the agent: not root's
    assert "left processes running as root: stopped" in init.stderr
    assert canary.leaked_into(agent.home, ws) == []
    if not pidns:  # (no namespace to end them: the image's daemon is this test's to end)
        subprocess.run(["pkill", "-f", f"sleep 100[01].{t}"], check=False)


DEVCONTAINER = {"remoteEnv": {"INITD_SOCKET": "/tmp/elsewhere.sock", "HOME_X": "1"},
                "containerEnv": {"INITD_STATE_DIR": "/tmp/elsewhere",
                                 "DISCOBOT_SESSION_ID": "forged"},
                "postStartCommand": "true"}
SHOW_ENV = """
    import json, os
    print(json.dumps({k: os.environ.get(k) for k in
                      ("INITD_SOCKET", "INITD_STATE_DIR", "DISCOBOT_SESSION_ID", "HOME_X")}))
"""


def test_devcontainer_json_cannot_redirect_initds_own_variables_for_the_agent(
        boot, agent: Agent, ws: Path) -> None:
    """The file is the agent's to write: where initd's socket and state are is initd's
    to say (a redirected INITD_SOCKET would send the agent's own `initd emit` and
    `initd turn` to a server the agent runs)."""
    (ws / ".devcontainer").mkdir()
    (ws / ".devcontainer" / "devcontainer.json").write_text(json.dumps(DEVCONTAINER))
    init = boot(sys.executable, agent_script(SHOW_ENV))
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    seen = json.loads(init.stdout_lines[-1])
    assert seen["INITD_SOCKET"] == init.socket
    assert seen["INITD_STATE_DIR"] is None
    assert seen["DISCOBOT_SESSION_ID"] != "forged"
    assert seen["HOME_X"] == "1"  # the file's other variables still apply
    for key in ("remoteEnv.INITD_SOCKET", "containerEnv.INITD_STATE_DIR",
                "containerEnv.DISCOBOT_SESSION_ID"):
        assert key in init.stderr, key


EVERY_KIND = """
    import json, os, subprocess, sys, time
    from tests.support.agent_side import call
    ws = sys.argv[1]
    with open(os.path.join(ws, "a.txt"), "w") as f:
        f.write("x")
    call("POST", "/v1/turn", {"trigger": "user"})
    subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data", "{}"])
    deadline = time.monotonic() + 30
    while not os.path.exists(os.path.join(ws, "devcontainer")) and time.monotonic() < deadline:
        time.sleep(0.05)
    print(json.dumps({name: open(os.path.join(ws, name)).read().strip()
                      for name in ("session", "file", "event", "devcontainer")}))
"""


def test_every_hook_initd_starts_gets_pythonsafepath(boot, agent: Agent, ws: Path) -> None:
    hooks = ws / ".discobot" / "hooks"
    for kind, fields in (("session", {"run_as": "root"}), ("file", {"pattern": "*.txt"}),
                         ("event", {})):
        hook(hooks, f"10-{kind}.sh", f'echo "$PYTHONSAFEPATH" > {ws}/{kind}', owner=agent,
             type={"event": "pre_tool"}.get(kind, kind), **fields)
    (ws / ".devcontainer.json").write_text(json.dumps(
        {"postStartCommand": f'echo "$PYTHONSAFEPATH" > {ws}/devcontainer'}))
    init = boot(sys.executable, agent_script(EVERY_KIND), str(ws))
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    assert json.loads(init.stdout_lines[-1]) == dict.fromkeys(
        ("session", "file", "event", "devcontainer"), "1")
