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

import pytest

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
