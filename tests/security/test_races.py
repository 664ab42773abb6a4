"""Races: the agent swaps links in and out of what root is about to touch, as fast as it
can, while root does its work again and again: the state directory while root records
background hooks (ROUNDS), the hooks directory while the pre-commit chain is rewritten
(CHAIN_ROUNDS)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.attack import Agent, Canary, agent_script, hook

ROUNDS = 200
# Measured on the code without the defence (the chain written as root with a plain open(),
# which follows the link): it failed 8 of 10 runs at 25 rounds, 9 of 10 at 50, 12 of 12 at
# 100, and 6 of 6 at 100 with every core kept busy. 200 rounds cost twice the CPU for a
# certainty 100 already gives.
CHAIN_ROUNDS = 100

FLIP = """
    import json, os, sys, threading
    from tests.support.agent_side import call

    targets = json.loads(sys.argv[1])  # {path: link target}
    rounds = int(sys.argv[2])
    action = json.loads(sys.argv[3])  # [method, path, body]
    stop = threading.Event()
    flips = 0

    def flip():
        global flips
        while not stop.is_set():
            for path, target in targets.items():
                aside = path + ".aside"
                try:
                    os.replace(path, aside) if os.path.lexists(path) else None
                    os.symlink(target, path)
                    os.replace(path, path + ".link")
                    if os.path.lexists(aside):
                        os.replace(aside, path)
                    os.replace(path + ".link", path) if not os.path.lexists(path) else \\
                        os.unlink(path + ".link")
                except OSError:
                    pass
            flips += 1

    thread = threading.Thread(target=flip)
    thread.start()
    done = 0
    for n in range(rounds):
        method, path, body = action
        if "{n}" in json.dumps(body):
            body = json.loads(json.dumps(body).replace("{n}", str(n)))
        code, _ = call(method, path, body)
        done += code == 200
        if sys.argv[4:]:  # a pre-commit hook comes and goes: the chain is rewritten
            hooks = sys.argv[4]
            names = sorted(os.listdir(hooks))
            name = "50-pc.sh"
            if name in names:
                os.unlink(os.path.join(hooks, name))
            else:
                with open(os.path.join(hooks, name), "w") as f:
                    f.write("#!/bin/sh\\n#---\\n# type: pre-commit\\n#---\\ntrue\\n")
                os.chmod(os.path.join(hooks, name), 0o755)
    stop.set()
    thread.join()
    print(json.dumps({"rounds": done, "flips": flips}), flush=True)
"""


FLIP_UNTIL = """
    import json, os, sys, time
    targets = json.loads(sys.argv[1])  # {path: link target}
    done = sys.argv[2]  # made by the last background hook
    flips = 0
    deadline = time.monotonic() + 240
    while not os.path.exists(done) and time.monotonic() < deadline:
        for path, target in targets.items():
            aside = path + ".aside"
            try:
                if os.path.lexists(path):
                    os.replace(path, aside)
                os.symlink(target, path)  # a link where root is about to look
                if os.path.lexists(aside):
                    os.replace(aside, path)  # and the real one back
            except OSError:
                pass
        flips += 1
    print(json.dumps({"done": os.path.exists(done), "flips": flips}), flush=True)
"""


@pytest.mark.slow
@pytest.mark.timeout(400)  # (200 rounds: minutes when other suites share the host)
def test_links_swapped_into_the_state_dir_while_root_records_background_hooks(
        boot, agent: Agent, ws: Path, sid: str, canary: Canary) -> None:
    """Root writes the state of the background session hooks it runs (status.json, their
    logs) while the agent runs: ROUNDS of them, each a root write through the one door,
    while the agent swaps links to root's files in and out of every name root uses."""
    import json

    hooks = ws / ".discobot" / "hooks"
    for n in range(ROUNDS):
        hook(hooks, f"{n:03d}-bg.sh", "echo bg", owner=agent, type="session",
             blocking=False)
    done = ws / "done"
    hook(hooks, f"{ROUNDS:03d}-last.sh", f"touch {done}", owner=agent, type="session",
         blocking=False)
    state = agent.state / sid / "hooks"
    targets = {str(state / "output"): str(canary.sub),
               str(state / ".status.json.lock"): str(canary.secret),
               str(state / "status.json"): str(canary.secret),
               **{str(state / "output" / f"{n:03d}-bg.log"): str(canary.victim)
                  for n in range(0, ROUNDS, 7)}}
    init = boot(sys.executable, agent_script(FLIP_UNTIL), json.dumps(targets), str(done))
    assert init.wait(timeout=300) == 0, init.stderr[-3000:]
    result = json.loads(init.stdout_lines[-1])
    assert result["done"] and result["flips"] > ROUNDS, result
    assert canary.changes() == []
    assert canary.leaked_into(agent.home) == []


@pytest.mark.slow
@pytest.mark.timeout(400)  # (CHAIN_ROUNDS turns, each rewriting the chain)
def test_a_hooks_dir_swapped_for_a_link_while_the_chain_is_rewritten(
        boot, agent: Agent, ws: Path, canary: Canary) -> None:
    import json

    hooks = ws / ".discobot" / "hooks"
    targets = {str(ws / ".git" / "hooks"): str(canary.sub)}
    init = boot(sys.executable, agent_script(FLIP), json.dumps(targets), str(CHAIN_ROUNDS),
                json.dumps(["POST", "/v1/turn", {"trigger": "user"}]), str(hooks))
    assert init.wait(timeout=300) == 0, init.stderr[-3000:]
    result = json.loads(init.stdout_lines[-1])
    assert result["rounds"] == CHAIN_ROUNDS and result["flips"] > CHAIN_ROUNDS
    assert canary.changes() == []
