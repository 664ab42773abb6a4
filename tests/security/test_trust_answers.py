"""What the agent learns, and what it costs root, when it asks about trust (invariant 16):
``POST /v1/trust`` goes to the hook service, which asks root (the store is root's alone).
The answer is about the hook asked only, in the same words for a hook a person approved
elsewhere (``10-deploy-prod.sh`` in a root 0700 directory), one never seen, and one of
the agent's own approved as it was before, and it never names a path of root's. A flood
of questions, through the service or straight into its channel to root, costs root a
bounded share of what it costs the agent; an approved hook asked about meanwhile is
approved, never refused because root was busy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.support.agent_side import cpu_seconds
from tests.support.attack import GIT_ENV, Agent, agent_script, hook

INITD = [sys.executable, "-m", "initd"]
# ASK: the agent's raw HTTP exchange (the answers compared byte for byte), its hook's hash
ASK = """
    import json, os, socket, subprocess, sys, time
    from initd.hooks.trust import for_script
    def ask(key, digest):
        body = json.dumps({"key": key, "digest": digest}).encode()
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(os.environ["INITD_SOCKET"])
            s.sendall(b"POST /v1/trust HTTP/1.0\\r\\nContent-Type: application/json\\r\\n"
                      b"Content-Length: %d\\r\\n\\r\\n%s" % (len(body), body))
            answer = b""
            while chunk := s.recv(65536):
                answer += chunk
        return answer.decode()
"""
ANSWERS = ASK + """
    own, prod = sys.argv[1], sys.argv[2]
    mine = for_script(own)
    other = "ab" * 32
    said = {"approved elsewhere": ask(prod, other),
            "never seen": ask(prod.replace("10-deploy-prod", "10-deploy-dev"), other),
            "its own, changed": ask(own, other),
            "its own": ask(own, mine.digest)}
    print(json.dumps(said), flush=True)
"""


@pytest.fixture
def store() -> Iterator[Path]:
    top = Path(tempfile.mkdtemp(prefix="initd-trust-store-"))  # root's, 0700
    yield top / "trust.json"
    shutil.rmtree(top, ignore_errors=True)


@pytest.fixture
def elsewhere() -> Iterator[Path]:
    """A workspace in a root 0700 directory, with a hook a person approves."""
    top = Path(tempfile.mkdtemp(prefix="initd-trust-elsewhere-"))
    prod = top / "prod"
    (prod / ".discobot" / "hooks").mkdir(parents=True)
    hook(prod / ".discobot" / "hooks", "10-deploy-prod.sh", "echo deploying", type="session")
    yield prod
    shutil.rmtree(top, ignore_errors=True)


def approve(ws: Path, store: Path, image: str, *more: str) -> None:
    out = subprocess.run([*INITD, "hooks", "trust", "--workspace", str(ws), "--hooks-dir",
                          image, "--trust-file", str(store), *more], capture_output=True,
                         text=True, timeout=60, env=GIT_ENV, cwd="/")
    assert out.returncode == 0 and "new " in out.stdout, out.stdout + out.stderr


def own_hook(agent: Agent, ws: Path) -> Path:
    return hook(ws / ".discobot" / "hooks", "50-pc.sh", "true", owner=agent,
                type="pre-commit")


def test_the_answer_is_the_same_whatever_the_store_holds(
        boot, agent: Agent, ws: Path, image: str, store: Path,  # type: ignore[no-untyped-def]
        elsewhere: Path) -> None:
    """Once: "changed since it was trusted" for a path approved anywhere, "not trusted
    yet" for any other, and the store's path with both."""
    os.chmod(image, 0o755)
    own = own_hook(agent, ws)
    approve(elsewhere, store, image)
    approve(ws, store, image, "--user", agent.name)
    init = boot(sys.executable, agent_script(ANSWERS), str(own),
                str(elsewhere / ".discobot" / "hooks" / "10-deploy-prod.sh"),
                more=("--trust", "--trust-file", str(store)))
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    said = json.loads(init.stdout_lines[-1])
    assert said["its own"].startswith("HTTP/1.0 200"), said
    assert json.loads(said["its own"].partition("\r\n\r\n")[2])["trusted"] is True
    refused = [said["approved elsewhere"], said["never seen"], said["its own, changed"]]
    assert refused[0].startswith("HTTP/1.0 200") and '"trusted": false' in refused[0], said
    assert refused[1:] == refused[:-1], said  # byte for byte
    for answer in said.values():
        for secret in (str(store.parent), str(elsewhere.parent), "10-deploy-prod"):
            assert secret not in answer, (secret, answer)


FLOOD = """
    import json, os, socket, subprocess, sys, time
    from tests.support.agent_side import channel_of, cpu_seconds, service_pid
    how, go, budget, own, approved = sys.argv[1:6]
    service = service_pid()
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.01)
    before = cpu_seconds(), cpu_seconds(service)
    # an approved hook asked about during the flood, by another process of the agent's
    meanwhile = subprocess.Popen([sys.executable, approved, own], stdout=subprocess.PIPE,
                                 text=True)
    n = 10**9
    if how == "channel":  # one message a send, so that none is cut by a full socket
        channel = channel_of(service)  # (never made non-blocking: the service's is too)
        while cpu_seconds() - before[0] < float(budget):
            try:
                channel.send(b'{"op": "trust", "id": %d, "key": "/k/%d", "digest": "%s"}\\n'
                             % (n, n % 1000, b"0" * 64), socket.MSG_DONTWAIT)
                n += 1
            except BlockingIOError:
                pass
            except OSError:  # root closed the channel (and restarts the service)
                break
    else:  # whole requests, never waiting for an answer: connect, send, close
        body = json.dumps({"key": "/k/x", "digest": "0" * 64}).encode()
        request = (b"POST /v1/trust HTTP/1.0\\r\\nContent-Length: %d\\r\\n\\r\\n%s"
                   % (len(body), body))
        while cpu_seconds() - before[0] < float(budget):
            with socket.socket(socket.AF_UNIX) as s:
                s.setblocking(False)
                try:
                    s.connect(os.environ["INITD_SOCKET"])
                    s.send(request)
                    n += 1
                except (BlockingIOError, ConnectionError):
                    pass
    spent = cpu_seconds() - before[0] + cpu_seconds(service) - before[1]
    print(json.dumps({"flooded": spent, "sent": n - 10**9}), flush=True)
    print(json.dumps({"meanwhile": meanwhile.communicate(timeout=60)[0]}), flush=True)
"""
APPROVED = ASK + """
    while (said := ask(sys.argv[1], for_script(sys.argv[1]).digest)).startswith(
            "HTTP/1.0 503"):  # the service's own queue, full of the flood: "try again"
        time.sleep(0.05)
    print(said, flush=True)
"""


@pytest.mark.parametrize("how", ["channel", "api"])
def test_a_flood_of_trust_questions_costs_root_a_bounded_share(
        boot, agent: Agent, ws: Path, image: str, store: Path,  # type: ignore[no-untyped-def]
        how: str) -> None:
    """The agent asks as fast as it can for 1.5 s of its own CPU: straight into the
    channel to root, or as whole requests to the API it never waits for. Root's CPU over
    that time, against what the agent's side (the flood and its hook service) spent, was
    0.15 to 0.18 through the API and 0.6 into the channel (root answered each at once,
    until the service could not read its answers as fast); read at a bounded rate, 0.01
    quiet and at most 0.05 under a load of 12 on 2 cores (four CPU burners beside)."""
    os.chmod(image, 0o755)
    own = own_hook(agent, ws)
    approve(ws, store, image, "--user", agent.name)
    gates = tempfile.mkdtemp(prefix="initd-atk-go-")
    os.chmod(gates, 0o755)
    try:
        init = boot(sys.executable, agent_script(FLOOD), how, os.path.join(gates, "go"),
                    "1.5", str(own), agent_script(APPROVED),
                    more=("--trust", "--trust-file", str(store)))
        init.expect("^ready$", timeout=60)
        supervisor = psutil.Process(init.init_pid).children()[0].pid
        before = cpu_seconds(supervisor)
        Path(gates, "go").touch()
        flooded = json.loads(init.expect('^{"flooded"', timeout=60).string)
        root = cpu_seconds(supervisor) - before
        assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    finally:
        shutil.rmtree(gates, ignore_errors=True)
    meanwhile = json.loads(init.stdout_lines[-1])["meanwhile"]
    assert '"trusted": true' in meanwhile, meanwhile  # delayed, never refused
    assert flooded["sent"] > 0
    assert root / flooded["flooded"] < 0.1, (root, flooded)
