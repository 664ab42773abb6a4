"""Root executes only the exact bytes it snapshotted (and, with ``--trust``, hashed)
before any hook ran (invariant 8), and only before the agent runs (invariant 11): a
background root session hook is refused, root session hooks after a user session hook
run as they were, and root hooks under a swapping race run only what was trusted."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.attack import Agent, agent_script, hook, root_record

ORIGINAL = 'echo "original $(id -u)" >> {record}/ran'
EVIL = 'echo "evil $(id -u)" >> {record}/ran'


@pytest.fixture
def record() -> Path:
    path = root_record()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def ran(record: Path) -> list[str]:
    path = record / "ran"
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.slow
def test_a_background_root_session_hook_is_refused_and_never_runs(
        boot, agent: Agent, ws: Path, record: Path) -> None:
    """It would still be running as root once the agent runs: refused when it loads,
    with the fix, whatever the agent writes into it later."""
    hooks = ws / ".discobot" / "hooks"
    hook(hooks, "10-wait.sh", "sleep 1", owner=agent, type="session", blocking=False)
    root = hook(hooks, "20-root.sh", ORIGINAL.format(record=record), owner=agent,
                type="session", run_as="root", blocking=False)
    init = boot("sh", "-c", f"sed -i s/original/evil/ {root} && sleep 3")
    assert init.wait(timeout=60) == 0, init.stderr
    assert ran(record) == []
    assert "run_as: root with blocking: false" in init.stderr


def test_a_user_session_hook_cannot_rewrite_a_later_root_one(
        boot, agent: Agent, ws: Path, record: Path) -> None:
    hooks = ws / ".discobot" / "hooks"
    hook(hooks, "10-user.sh", "sed -i s/original/evil/ \"$DISCOBOT_WORKSPACE\"/.discobot/"
         "hooks/20-root.sh", owner=agent, type="session")
    hook(hooks, "20-root.sh", ORIGINAL.format(record=record), owner=agent, type="session",
         run_as="root")
    init = boot("true")
    assert init.wait(timeout=60) == 0, init.stderr
    assert ran(record) == ["original 0"]


SWAP = """
    import os, sys, time
    hooks, out, rounds = sys.argv[1], sys.argv[2], 0
    names = sorted(n for n in os.listdir(hooks) if n.endswith("-root.sh"))
    originals = {n: open(os.path.join(hooks, n)).read() for n in names}
    deadline = time.monotonic() + 6
    while time.monotonic() < deadline:  # all evil, then all as trusted, and again
        for evil in (True, False):
            for name in names:
                tmp = os.path.join(hooks, "." + name)
                with open(tmp, "w") as f:
                    f.write(originals[name].replace("original", "evil") if evil
                            else originals[name])
                os.chmod(tmp, 0o755)
                os.replace(tmp, os.path.join(hooks, name))
        rounds += 1
    with open(out, "w") as f:
        f.write(str(rounds))
"""

RACED = 200


@pytest.mark.slow
def test_trusted_root_hooks_racing_a_swapping_process_run_only_what_was_trusted(
        boot, agent: Agent, ws: Path, image: str, record: Path) -> None:
    """Before the agent runs, a process of the agent's uid may: here one a user session
    hook left, swapping every root hook file while root runs them one by one."""
    hooks = ws / ".discobot" / "hooks"
    rounds = ws / "rounds"
    swap = agent_script(SWAP)
    hook(hooks, "000-swap.sh", f"setsid {sys.executable} {swap} {hooks} {rounds} "
         "</dev/null >/dev/null 2>&1 & sleep 0.2", owner=agent, type="session")
    for n in range(1, RACED + 1):
        hook(hooks, f"{n:03d}-root.sh", ORIGINAL.format(record=record), owner=agent,
             type="session", run_as="root")
    trust_file = record / "trust.json"
    subprocess.run([sys.executable, "-m", "initd", "hooks", "trust", "--workspace", str(ws),
                    "--hooks-dir", image, "--trust-file", str(trust_file)], check=True,
                   capture_output=True)
    init = boot("sh", "-c", f"while [ ! -s {rounds} ]; do sleep 0.1; done; cat {rounds}",
                more=("--trust", "--trust-file", str(trust_file)))
    assert init.wait(timeout=120) == 0, init.stderr
    assert int(init.stdout_lines[-1]) > 0  # it swapped all along
    lines = ran(record)
    assert [line for line in lines if line != "original 0"] == []
    assert len(lines) == RACED, init.stderr
