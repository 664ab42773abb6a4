"""Hook files of the workspace's hooks directory that will not run, as the agent plants
them (issue 36): root's ``initd hooks check`` names each one as an error and exits 1
(it once printed ``0 hook(s) valid, 0 error(s)`` and exited 0 for every link), and an
event the planted guard was meant to block is blocked (invariant 12). A link inside the
workspace to the agent's own hook file (``ln -s ../../scripts/guard.sh``) is that hook:
root checks it without following the link, the agent's service runs it; a ``run_as:
root`` hook is never a link (root runs only a file of the hooks directory itself)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from tests.support.attack import GIT_ENV, Agent, Canary, agent_script, as_agent, hook
from tests.support.harness import Initd
from tests.support.redteam import HOOKS, records

DENY = 'grep -q "rm -rf" && { echo "refusing rm -rf" >&2; exit 2; }; exit 0'
RM = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /data"}}
FIRE = """
    import json, subprocess, sys
    out = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data",
                          sys.argv[1]], capture_output=True, text=True, timeout=120)
    print(json.dumps({"code": out.returncode, "stdout": out.stdout[-4000:]}), flush=True)
"""



@pytest.fixture
def record() -> Iterator[Path]:
    yield from records()


def check(ws: Path, agent: Agent, image: str) -> subprocess.CompletedProcess[str]:
    """``initd hooks check`` as root, for the agent's workspace."""
    return subprocess.run([sys.executable, "-m", "initd", "hooks", "check", "--workspace",
                           str(ws), "--hooks-dir", image, "--user", agent.name],
                          capture_output=True, text=True, timeout=60, env=GIT_ENV, cwd="/")


Boot = Callable[..., Initd]


def fire(boot: Boot, payload: Mapping[str, object]) -> dict[str, object]:
    """initd booted as PID 1 over the workspace; the agent (CMD) sends one pre_tool."""
    init = boot(sys.executable, agent_script(FIRE), json.dumps(payload))
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    fired: dict[str, object] = json.loads(init.stdout_lines[-1])
    return fired


def guard(path: Path, agent: Agent) -> Path:
    """The agent's guard: a pre_tool hook that refuses `rm -rf`, at ``path`` (its own)."""
    as_agent(agent, f"mkdir -p {path.parent}")
    return hook(path.parent, path.name, DENY, owner=agent, type="pre_tool", name="no rm")


def plant(agent: Agent, ws: Path, canary: Canary, how: str) -> Path:
    """``how`` the agent puts a link where its guard, 10-guard.sh, would be."""
    hooks = ws / Path(*HOOKS)
    at = hooks / "10-guard.sh"
    if how == "outside the workspace":  # a real guard of the agent's, in /tmp
        elsewhere = Path(agent_script(""))
        guard(elsewhere.parent / "guard.sh", agent)
        shutil.chown(elsewhere.parent, agent.name)
        as_agent(agent, f"ln -s {elsewhere.parent}/guard.sh {at}")
    elif how == "a link to a link":
        guard(ws / "scripts" / "real.sh", agent)
        as_agent(agent, f"ln -s real.sh {ws}/scripts/guard.sh && ln -s ../../scripts/guard.sh "
                        f"{at}")
    elif how == "a link on the way":
        guard(ws / "scripts" / "guard.sh", agent)
        as_agent(agent, f"ln -s scripts {ws}/bin && ln -s ../../bin/guard.sh {at}")
    else:
        aim = {"dangling": "moved-away.sh", "a loop": "10-guard.sh", "a loop of two":
               "11-other.sh", "root's secret": str(canary.secret)}[how]
        as_agent(agent, f"ln -s {aim} {at}")
        if how == "a loop of two":
            as_agent(agent, f"ln -s 10-guard.sh {hooks}/11-other.sh")
    return at


PLANTED = {  # how -> what check says of it
    "dangling": "which does not exist",
    "a loop": "a link itself",
    "a loop of two": "a link itself",
    "outside the workspace": "outside the workspace",
    "root's secret": "outside the workspace",
    "a link to a link": "a link itself or has one on the way",
    "a link on the way": "a link itself or has one on the way",
}


@pytest.mark.parametrize("how", list(PLANTED))
def test_a_link_that_names_no_hook_file_fails_the_check_and_blocks(
        boot: Boot, agent: Agent, ws: Path, canary: Canary, image: str, how: str) -> None:
    at = plant(agent, ws, canary, how)
    out = check(ws, agent, image)
    assert out.returncode == 1, out.stdout + out.stderr
    [line] = [line for line in out.stdout.splitlines() if f"{at}:" in line]
    assert line.startswith(f"error: {at}: a symbolic link to ") and PLANTED[how] in line
    assert canary.token not in out.stdout + out.stderr and canary.changes() == []
    fired = fire(boot, RM)
    assert fired["code"] == 2, fired  # the guard it would have been stands in: blocked


def test_the_agents_linked_guard_is_checked_by_root_and_guards(
        boot: Boot, agent: Agent, ws: Path, image: str) -> None:
    """`ln -s ../../scripts/guard.sh .discobot/hooks/`: root's check reads it without
    following the link (it once noted "a symbolic link: not read" and passed with 0
    hooks), and the agent's service runs the file it names."""
    target = guard(ws / "scripts" / "guard.sh", agent)
    as_agent(agent, f"ln -s ../../scripts/guard.sh {ws / Path(*HOOKS)}/10-guard.sh")
    out = check(ws, agent, image)
    assert (out.returncode, out.stdout) == (0, "1 hook(s) valid, 0 error(s)\n"), out.stdout
    listed = subprocess.run([sys.executable, "-m", "initd", "hooks", "list", "--workspace",
                             str(ws), "--hooks-dir", image, "--user", agent.name],
                            capture_output=True, text=True, timeout=60, env=GIT_ENV, cwd="/")
    assert f"no rm  {target}: front matter of hook 'no rm'" in listed.stdout, listed.stdout
    fired = fire(boot, RM)
    assert fired["code"] == 2 and "refusing rm -rf" in str(fired["stdout"]), fired
    assert fire(boot, {"tool_name": "Bash", "tool_input": {"command": "ls"}})["code"] == 0


def test_a_guard_the_agent_cannot_read_fails_roots_check(
        boot: Boot, agent: Agent, ws: Path, image: str) -> None:
    """chmod 311 on its own guard: root reads it (it once passed root's check as a valid
    hook); the agent, who runs it, cannot."""
    path = guard(ws / Path(*HOOKS) / "10-guard.sh", agent)
    as_agent(agent, f"chmod 311 {path}")
    out = check(ws, agent, image)
    assert out.returncode == 1, out.stdout
    assert f"error: {path}: hook 'no rm': uid {agent.uid}, who runs it, may not read and " \
           f"execute it (mode 311, owner uid {agent.uid}: chmod or chown it)" in out.stdout
    assert fire(boot, RM)["code"] == 2


def test_a_root_hook_that_is_a_link_never_runs_as_root(
        boot: Boot, agent: Agent, ws: Path, image: str, record: Path) -> None:
    """A `run_as: root` session hook linked into the hooks directory: root runs only a
    file of the hooks directory itself, copied at boot (it once followed the link, copied
    what it named and ran it as uid 0)."""
    as_agent(agent, f"mkdir -p {ws}/scripts")
    hook(ws / "scripts", "setup.sh", f"id -u >> {record}/ran", owner=agent,
         type="session", run_as="root")
    link = ws / Path(*HOOKS) / "10-setup.sh"
    as_agent(agent, f"ln -s ../../scripts/setup.sh {link}")
    out = check(ws, agent, image)
    assert out.returncode == 1, out.stdout
    assert f"error: {link}: run_as: root, and a symbolic link to {ws}/scripts/setup.sh: " \
           "root runs only a file of the hooks directory itself" in out.stdout
    init = boot("true")
    assert init.wait(timeout=60) == 0, init.stderr
    assert not (record / "ran").exists()
    assert "a symbolic link to" in init.stderr


def test_every_other_file_that_will_not_run_fails_the_check(
        agent: Agent, ws: Path, image: str) -> None:
    """What the agent may leave in the hooks directory beside its hooks: each one is an
    error of root's check, naming it (`list` notes them; check once passed them)."""
    hooks = ws / Path(*HOOKS)
    guard(hooks / "10-guard.sh", agent)
    as_agent(agent, f"cd {hooks} && mkdir lib && mkfifo pipe && echo '# notes' > README.md "
                    "&& : > .gitkeep && ln -s ../../lib libs && mkdir -p ../../lib && "
                    "cp 10-guard.sh .hidden.sh")
    out = check(ws, agent, image)
    assert out.returncode == 1
    named = {line.split(": ")[1].removeprefix(f"{hooks}/") for line in out.stdout.splitlines()
             if line.startswith("error: ")}
    assert named == {"lib", "pipe", "README.md", ".gitkeep", "libs", ".hidden.sh"}, out.stdout
    assert out.stdout.splitlines()[-1] == "1 hook(s) valid, 6 error(s)"
    assert os.path.isdir(hooks / "lib")
