"""What the agent can make root do about the pre-commit chain once it runs (invariant 16):
an ``initd turn`` after it changed a pre-commit hook, or the ``precommit`` op sent
straight over the hook service's channel (its fd taken with pidfd_getfd), as often as it
likes. Root starts nothing as uid 0 for it: in a repository root owns and shares with
the agent's group (``git init --shared=group``, which initd supports through
safe.directory) the rewrite is refused in one line and the chain keeps the hooks it had
at the start; in the agent's own repository it runs as the agent, one at a time, and
past a few at once, once every 10 s. ``strace -f`` on root's supervisor sees every
program its children start, with the uid each ran as (tests/support/exectrace.py)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from initd.supervisor.serviceops import PRECOMMIT_BURST
from tests.support.attack import (
    GIT_ENV,
    Agent,
    agent_script,
    as_agent,
    boot_args,
    hook,
    make_agent,
    remove_agent,
)
from tests.support.exectrace import Exec, ExecTrace
from tests.support.harness import Initd

# The agent: waits for the test's go, adds a pre-commit hook and asks for a turn (the
# service then asks root to rewrite the chain), asks root itself over the channel, and
# commits.
AGENT = """
    import json, os, signal, subprocess, sys, time
    from tests.support.agent_side import call, channel_of, service_pid, stop
    ws, go, asks, wait = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "wait"
    service = service_pid()
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.01)
    new = os.path.join(ws, ".discobot/hooks/20-new.sh")
    with open(new, "w") as f:
        f.write("#!/bin/sh\\n#---\\n# type: pre-commit\\n#---\\necho new\\n")
    os.chmod(new, 0o775)
    said = {"turn": call("POST", "/v1/turn", {"trigger": "user"})[0]}
    channel = channel_of(service)
    stop(service)  # (so that the replies come to us, not to it)
    channel.settimeout(60)
    replies, buffer, sent = [], b"", [10**6]
    def ask(n):
        channel.sendall(b"".join(b'{"op": "precommit", "id": %d}\\n' % (sent[0] + i)
                                 for i in range(n)))
        sent[0] += n
    def answers(n):
        global buffer
        while len(replies) < n:
            chunk = channel.recv(65536)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\\n")
            replies.extend(r for r in map(json.loads, lines) if r.get("op") == "reply")
    if wait:  # one at a time, each once the last is answered, as fast as that goes
        for n in range(1, asks + 1):
            ask(1)
            answers(n)
    else:
        ask(asks)
        answers(asks)
    os.kill(service, signal.SIGCONT)
    said["replies"] = replies
    with open(os.path.join(ws, "work.txt"), "a") as f:
        f.write("more\\n")
    subprocess.run(["git", "-C", ws, "add", "work.txt"], check=True)
    out = subprocess.run(["git", "-C", ws, "commit", "-qm", "more"], capture_output=True,
                         text=True)
    said["commit"] = [out.returncode, out.stderr[-2000:]]
    print(json.dumps(said), flush=True)
"""


def run_agent(boot, ws: Path, asks: int, wait: bool,  # type: ignore[no-untyped-def]
              **kwargs: object) -> tuple[dict[str, object], list[Exec]]:
    """Boot, trace root's supervisor from before the agent's first act to its end: what
    the agent said, and every program root's supervisor and its children started."""
    gates = tempfile.mkdtemp(prefix="initd-atk-go-")
    os.chmod(gates, 0o755)
    try:
        init: Initd = boot(sys.executable, agent_script(AGENT), str(ws),
                           os.path.join(gates, "go"), str(asks), "wait" if wait else "all",
                           **kwargs)
        init.expect("^ready$", timeout=60)
        supervisor = psutil.Process(init.init_pid).children()[0].pid
        trace = ExecTrace(supervisor)
        Path(gates, "go").touch()
        try:
            code = init.wait(timeout=60)
        finally:
            started = trace.stop()
        assert code == 0, init.stderr[-3000:]
        return json.loads(init.stdout_lines[-1]), started
    finally:
        shutil.rmtree(gates, ignore_errors=True)


def rewrites(started: list[Exec]) -> list[Exec]:
    return [ran for ran in started if '"precommit", "install"' in ran.argv]


# --- a repository root owns, shared with the agent's group ----------------------------

@pytest.fixture
def member() -> Iterator[Agent]:
    """An agent of its own, in a group of its own: the repository's."""
    made = make_agent()
    group = f"initd-sh-{secrets.token_hex(3)}"
    try:
        subprocess.run(["groupadd", group], check=True)
        subprocess.run(["usermod", "-aG", group, made.name], check=True)
        yield made
    finally:
        remove_agent(made)
        subprocess.run(["groupdel", group], capture_output=True)


def member_group(agent: Agent) -> str:
    out = subprocess.run(["id", "-Gn", agent.name], capture_output=True, text=True,
                         check=True)
    return next(g for g in out.stdout.split() if g.startswith("initd-sh-"))


@pytest.fixture
def shared(member: Agent) -> Iterator[Path]:
    """``git init --shared=group``, root's, group-writable for the agent's group, with a
    pre-commit hook that notes who ran it; safe.directory added for the agent by a
    person's ``initd precommit install --user`` (which installs the chain too)."""
    top = Path(tempfile.mkdtemp(prefix="initd-atk-shared-"))
    top.chmod(0o755)
    ws, group = top / "ws", member_group(member)
    ws.mkdir()
    record = top / "record"
    record.mkdir(mode=0o1777)
    record.chmod(0o1777)

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(ws), *args], check=True, env=GIT_ENV,
                       capture_output=True)
    git("init", "-q", "--shared=group")
    git("config", "user.email", "agent@example.com")
    git("config", "user.name", "Agent")
    (ws / ".discobot" / "hooks").mkdir(parents=True)
    hook(ws / ".discobot" / "hooks", "10-who.sh", f'echo "10-who $(id -u)" >> {record}/ran',
         type="pre-commit")
    (ws / "work.txt").write_text("one\n")
    git("add", "-A")
    git("commit", "-qm", "one", "--no-verify")
    subprocess.run(["chgrp", "-R", group, str(ws)], check=True)
    subprocess.run(["chmod", "-R", "g+rwX", str(ws)], check=True)
    subprocess.run(["find", str(ws), "-type", "d", "-exec", "chmod", "g+s", "{}", "+"],
                   check=True)
    out = subprocess.run([sys.executable, "-m", "initd", "precommit", "install",
                          "--workspace", str(ws), "--user", member.name, "--hooks-dir",
                          str(top / "no-image-hooks")], capture_output=True, text=True,
                         env=GIT_ENV, cwd="/", timeout=60)
    assert out.returncode == 0 and "safe.directory" in out.stdout, out.stdout + out.stderr
    yield ws
    shutil.rmtree(top, ignore_errors=True)


def test_a_shared_repository_of_roots_is_never_rewritten_by_a_root_process(
        initd, member: Agent, shared: Path) -> None:  # type: ignore[no-untyped-def]
    """Once it ran as uid 0, with every capability, reading the agent's hook files, at
    each turn after a changed pre-commit hook and at each ``precommit`` on the channel."""
    image = tempfile.mkdtemp(prefix="initd-atk-image-")
    sid = f"atk-{secrets.token_hex(4)}"

    def boot(*cmd: str, **kwargs: object) -> Initd:
        return initd([*boot_args(member, shared, sid, image), "--", *cmd],  # type: ignore[no-any-return]
                     **kwargs)
    try:
        said, started = run_agent(boot, shared, asks=5, wait=True)
    finally:
        shutil.rmtree(image, ignore_errors=True)
    assert [ran for ran in started if ran.uid == 0] == []
    assert rewrites(started) == []
    replies = said["replies"]
    assert isinstance(replies, list) and len(replies) == 5
    assert all("is root's" in str(r.get("refused")) and "next start" in str(r["refused"])
               for r in replies), replies
    assert said["turn"] == 200
    assert said["commit"][0] == 0, said  # type: ignore[index]  # (the chain of the start)
    assert (shared.parent / "record" / "ran").read_text().splitlines() == \
        [f"10-who {member.uid}"]
    chain = (shared / ".git" / "hooks" / "pre-commit").read_text()
    assert "10-who" in chain and "20-new" not in chain  # as written at the start


# --- the agent's own repository ---------------------------------------------------------

def test_the_agents_own_chain_is_rewritten_as_the_agent_and_not_at_will(
        boot, agent: Agent, ws: Path) -> None:  # type: ignore[no-untyped-def]
    """Twenty asks in a row, each once the last was answered: a few rewrites, each run
    as the agent; the rest answered at once, "too many", with no process (it once ran
    all twenty)."""
    hook(ws / ".discobot" / "hooks", "10-pc.sh", "true", owner=agent, type="pre-commit")
    as_agent(agent, f"cd {ws} && echo one > work.txt && git add -A && "
                    "git commit -qm one --no-verify")
    said, started = run_agent(boot, ws, asks=20, wait=True)
    ran = rewrites(started)
    assert ran and {r.uid for r in ran} == {agent.uid}, started
    assert [r for r in started if r.uid == 0] == []
    assert len(ran) <= PRECOMMIT_BURST + 1, ran  # (+1: the turn's own, if the burst was
    replies = said["replies"]  # refilled meanwhile)
    assert isinstance(replies, list) and len(replies) == 20
    assert [r for r in replies if "too many" in str(r.get("error"))], replies
    assert said["commit"][0] == 0, said  # type: ignore[index]
