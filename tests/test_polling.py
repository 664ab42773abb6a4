"""Descriptor numbers above 1023 are normal operation (invariant 13): initd polls, never
selects. ``select.select`` raises ValueError for a descriptor of 1024 or more, which a
supervisor reaches as soon as it holds that many (a flood on the probe port, a runtime
that passes descriptors on), and its ValueError ended the supervisor. One test walks
initd's source and fails on any ``select.select``; the other boots initd with every
descriptor below 1,101 taken, so that each one it makes is above 1023, and runs a
session hook, the hook service (killed and restarted) and the agent's stop through it."""

from __future__ import annotations

import ast
import os
import resource
import shutil
import signal
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.hooks.support import add_hook, forget_session
from tests.support import harness
from tests.support.attack import agent_script

PACKAGE = Path(__file__).resolve().parent.parent / "initd"
TAKEN = 1101  # descriptors 3..1100 are taken before initd starts
# Runs before unshare: every descriptor from 3 to TAKEN - 1 a copy of /dev/null, kept
# across exec (subprocess closes the ones it did not make after preexec_fn, so not there).
OCCUPY = """
import os, sys
null = os.open("/dev/null", os.O_RDONLY)
for fd in range(3, int(sys.argv[1])):
    if fd != null:
        os.dup2(null, fd)
os.execvp(sys.argv[2], sys.argv[2:])
"""


def selects(tree: ast.AST) -> Iterator[int]:
    """The lines where ``tree`` calls select.select (under any name it imports it as) or
    makes a selectors.SelectSelector."""
    names = {"select"}  # what the select module is called here
    direct: set[str] = set()  # what select.select itself is called here
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name == "select"}
        elif isinstance(node, ast.ImportFrom) and node.module == "select":
            direct |= {a.asname or a.name for a in node.names if a.name == "select"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module, name = node.value.id, node.attr
            if (module in names and name == "select") or \
                    (module == "selectors" and name == "SelectSelector"):
                yield node.lineno
        elif isinstance(node, ast.Name) and node.id in direct:
            yield node.lineno


def test_initd_never_calls_select_select() -> None:
    found = [f"{path.relative_to(PACKAGE.parent)}:{line}"
             for path in sorted(PACKAGE.rglob("*.py"))
             for line in selects(ast.parse(path.read_text(), str(path)))]
    assert found == [], "select.select cannot watch a descriptor above 1023: use " \
                        "spawn.wait_fds (poll) or selectors' epoll instead, at " + ", ".join(found)


@pytest.mark.parametrize("source", [
    "import select\nselect.select([], [], [], 0)\n",
    "import select as s\ns.select([0], [], [])\n",
    "from select import select\nselect([0], [], [])\n",
    "from select import select as wait\nwait([0], [], [])\n",
    "import selectors\nselectors.SelectSelector()\n",
])
def test_the_walk_finds_every_spelling(source: str) -> None:
    assert list(selects(ast.parse(source))), source


@pytest.fixture
def occupied(monkeypatch: pytest.MonkeyPatch) -> None:
    """initd started with descriptors 3..TAKEN-1 taken (and room for more above)."""
    monkeypatch.setattr(harness, "UNSHARE",
                        [sys.executable, "-c", OCCUPY, str(TAKEN), *harness.UNSHARE])


AGENT = """
    import os, signal, sys, time
    from tests.support.agent_side import ready, service_pid

    first = service_pid(timeout=60)
    os.kill(first, signal.SIGKILL)
    service_pid(not_pid=first, timeout=60)
    print("service back" if ready(60) else "service not ready", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(9))
    print("waiting for TERM", flush=True)
    while True:
        time.sleep(1)
"""


def raise_nofile() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE,
                       (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_descriptors_above_1023_are_normal_operation(initd, occupied) -> None:  # type: ignore[no-untyped-def]
    ws = Path(tempfile.mkdtemp(prefix="initd-fds-"))
    sid = f"fds-{uuid.uuid4().hex[:8]}"
    ran = ws / "hook-ran"
    add_hook(ws / ".discobot" / "hooks", "10-boot.sh", f"echo ran > {ran}", type="session")
    try:
        init = initd(["--workspace", str(ws), "--session-id", sid, "--hooks-dir",
                      str(ws / "no-image"), "--grace", "5", "--", sys.executable,
                      agent_script(AGENT)], preexec_fn=raise_nofile)
        init.expect("^service back$", timeout=90)
        init.expect("^waiting for TERM$")
        assert ran.read_text() == "ran\n"  # the session hook, through the runner's pump
        supervisor = psutil.Process(init.init_pid).children()[0].pid
        assert min(int(fd) for fd in os.listdir(f"/proc/{supervisor}/fd")
                   if int(fd) > 2) == 3  # (the test's premise: the low ones are taken)
        pidfds = [int(fd) for fd in os.listdir(f"/proc/{supervisor}/fd")
                  if "pidfd" in os.readlink(f"/proc/{supervisor}/fd/{fd}")]
        assert pidfds and min(pidfds) >= TAKEN  # what the supervisor polls on
        init.signal(signal.SIGTERM)  # the stop: the agent's group, polled meanwhile
        assert init.wait(60) == 9, init.stderr[-3000:]
        assert "Traceback" not in init.stderr
    finally:
        forget_session(sid)
        shutil.rmtree(ws, ignore_errors=True)
