"""Past its log's cap, a command's or a hook's output pipe is read by a drain (process/pipes.py),
not by root's supervisor: a chatty process (``yes``) then costs root no CPU in proportion
to what it writes. Observed through /proc on a real boot (initd as PID 1, a real agent
user), by structure, never by time: which processes hold the pipe's read end, who the
drain is, and the supervisor's CPU ticks against the bytes the writer wrote (a gigabyte,
which root reading in blocks, let alone line by line, would pay tens of ticks for)."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.support.attack import (
    Agent,
    agent_for_tests,
    empty_dir,
    hook,
    workspace_for_tests,
)
from tests.support.harness import Initd, wait_for

pytestmark = pytest.mark.timeout(240)

GIB = 2**30
TICKS_PER_GIB = 10  # the supervisor's CPU ticks (1/100 s) while the writer writes 1 GiB


@pytest.fixture(scope="module")
def agent() -> Iterator[Agent]:
    yield from agent_for_tests("makes a user and boots initd as root")


@pytest.fixture
def ws(agent: Agent) -> Iterator[Path]:
    yield from workspace_for_tests(agent, forget_state=True)


def boot(agent: Agent, ws: Path, image: str, *cmd: str) -> Initd:
    return Initd(["--log-format", "json", "--user", agent.name, "--workspace", str(ws),
                  "--session-id", f"drain-{uuid.uuid4().hex[:8]}", "--hooks-dir", image,
                  "--no-service", "--", *cmd])


def ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime, every thread's


def wrote(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError(f"no wchar for {pid}")


def holders(target: str) -> dict[int, list[int]]:
    """Every process that has ``target`` (``pipe:[N]``) open: pid -> its fds."""
    found: dict[int, list[int]] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    found.setdefault(int(pid), []).append(int(fd))
        except OSError:
            continue  # gone, or a kernel thread
    return found


def named(init: Initd, name: str) -> psutil.Process:
    def look() -> psutil.Process | None:
        try:
            return next((p for p in init.descendants() if p.name() == name), None)
        except psutil.Error:  # (one of them ended while we looked)
            return None
    return wait_for(look, 60, f"a {name} under initd")  # type: ignore[return-value]


def supervisor_of(init: Initd) -> psutil.Process:
    """PID 1's child that is initd: forked, never exec'd, so with PID 1's command line
    (orphans, ``yes &`` among them, are PID 1's children too)."""
    pid1 = psutil.Process(init.init_pid)
    [supervisor] = [p for p in pid1.children() if p.cmdline() == pid1.cmdline()]
    return supervisor


def check_drained(init: Initd, agent: Agent) -> None:
    """``yes`` under ``init`` writes to a pipe read by a drain, never by the supervisor."""
    writer = named(init, "yes")
    supervisor = supervisor_of(init)
    pipe = os.readlink(f"/proc/{writer.pid}/fd/1")
    assert pipe.startswith("pipe:"), pipe
    wait_for(lambda: wrote(writer.pid) > 64 * 2**20, 60, "yes past the log's cap")
    drain = named(init, "tail")
    held = holders(pipe)
    assert supervisor.pid not in held and init.init_pid not in held, held
    assert set(held) >= {writer.pid, drain.pid}, (held, writer.pid, drain.pid)
    assert held[drain.pid] == [0]  # the drain reads it on its stdin
    # the drain: the writer's user, not root, without privileges, holding only its pipes
    assert drain.uids().real == drain.uids().effective == agent.uid
    assert Path(f"/proc/{drain.pid}/status").read_text().split("CapEff:")[1].split()[0] \
        == "0000000000000000"
    fds = {int(fd): os.readlink(f"/proc/{drain.pid}/fd/{fd}")
           for fd in os.listdir(f"/proc/{drain.pid}/fd")}
    assert sorted(fds) == [0, 1, 2] and fds[2] == "/dev/null", fds
    assert holders(fds[1]).keys() == {drain.pid, supervisor.pid}  # root reads its end
    # root's cost does not grow with the bytes: a gigabyte more, a few ticks at most
    before, start = ticks(supervisor.pid), wrote(writer.pid)
    wait_for(lambda: wrote(writer.pid) - start > GIB, 120, "yes writing a gigabyte")
    spent = ticks(supervisor.pid) - before
    assert spent <= TICKS_PER_GIB, f"the supervisor spent {spent} ticks on 1 GiB of output"


def test_a_daemon_left_by_post_start_costs_root_nothing(agent: Agent, ws: Path) -> None:
    as_json = json.dumps({"postStartCommand": "yes &", "waitFor": "postStartCommand"})
    (ws / ".devcontainer.json").write_text(as_json)
    os.chown(ws / ".devcontainer.json", agent.uid, agent.gid)
    release = ws / "release"
    image = empty_dir()
    init = boot(agent, ws, image, "sh", "-c",
                f"i=0; until [ -e {release} ] || [ $i -gt 2400 ]; do i=$((i+1)); "
                "sleep 0.05; done")
    try:
        check_drained(init, agent)
        release.touch()
        assert init.wait(60) == 0, init.stderr
    finally:
        init.kill()
        shutil.rmtree(image, ignore_errors=True)
    log = next((agent.state).glob("drain-*/hooks/output/devcontainer-poststartcommand.log"))
    text = log.read_bytes()
    assert text.startswith(b"y\ny\n") and b"[initd: output truncated at " in text
    assert text.endswith(b"y\n") or b"what followed is lost" in text


def test_a_session_hook_that_prints_forever_costs_root_nothing(agent: Agent, ws: Path
                                                                 ) -> None:
    """The same for a (blocking) session hook that runs as the agent: ended here by the
    test (KILL to its ``yes``), it is a failed hook and the boot goes on."""
    image = empty_dir()
    os.chmod(image, 0o755)  # (the agent runs the image's hook from there)
    hook(Path(image), "10-chatty", "exec yes", type="session")
    init = boot(agent, ws, image, "true")
    try:
        check_drained(init, agent)
        named(init, "yes").kill()
        assert init.wait(60) == 0, init.stderr
    finally:
        init.kill()
        shutil.rmtree(image, ignore_errors=True)
    [status] = agent.state.glob("drain-*/hooks/status.json")
    result = json.loads(status.read_text())["hooks"]["10-chatty"]
    assert result["lastResult"] == "failure", result
