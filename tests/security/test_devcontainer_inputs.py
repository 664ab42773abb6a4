"""What is new in the dev container phase, attacked by the agent (invariants 8, 11): the
sub-folder files root looks for, the environment the file gives, the drain root starts
for a chatty command's output, and the user's profile probed for userEnvProbe. Each case
has a root-owned canary that an attack through root would change."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.attack import Agent, Canary, as_agent, hook
from tests.support.harness import Initd

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(autouse=True)
def forget_markers(agent: Agent) -> Iterator[None]:
    yield
    shutil.rmtree(agent.state / "devcontainer", ignore_errors=True)
    for name in (".profile", ".bashrc", "bin"):
        path = Path(agent.home, name)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists() or path.is_symlink():
            path.unlink()


def plant(agent: Agent, ws: Path, data: object, rel: str) -> Path:
    """The file, written by the agent (its folders too)."""
    path = ws / rel
    as_agent(agent, f"mkdir -p {path.parent} && cat > {path} <<'EOF'\n{json.dumps(data)}\nEOF")
    return path


def said(init: Initd) -> list[str]:
    return [str(json.loads(line).get("event")) for line in init.stderr.splitlines()
            if line.startswith("{")]


# --- the third place: .devcontainer/<folder>/devcontainer.json


def test_a_sub_folder_file_that_is_a_link_is_never_read(
        boot: Callable[..., Initd], agent: Agent, ws: Path, canary: Canary) -> None:
    as_agent(agent, f"mkdir -p {ws}/.devcontainer/x && "
                    f"ln -s {canary.secret} {ws}/.devcontainer/x/devcontainer.json")
    init = boot("true")
    assert init.wait(timeout=60) == 0, init.stderr
    assert canary.token not in init.stderr + "\n".join(init.stdout_lines)
    assert any("a symbolic link: not read" in line for line in said(init)), init.stderr
    assert canary.changes() == []


@pytest.mark.parametrize("link", [".devcontainer/x", ".devcontainer"])
def test_a_folder_that_is_a_link_is_never_entered(
        boot: Callable[..., Initd], agent: Agent, ws: Path, link: str) -> None:
    """A root directory holding a devcontainer.json (root's own, which the agent cannot
    read), linked in as the sub-folder or as .devcontainer itself: nothing of it runs."""
    root_dir = Canary(files={"devcontainer.json": json.dumps(
        {"onCreateCommand": f"touch {ws}/followed", "postStartCommand": f"touch {ws}/f2"})})
    try:
        as_agent(agent, f"mkdir -p {ws}/.devcontainer && ln -s {root_dir.dir} {ws}/{link}")
        init = boot("true")
        assert init.wait(timeout=60) == 0, init.stderr
        assert not (ws / "followed").exists() and not (ws / "f2").exists()
        assert root_dir.token not in init.stderr
        assert root_dir.changes() == []
    finally:
        root_dir.remove()


@pytest.mark.parametrize("kind", ["huge", "fifo"])
def test_a_huge_or_fifo_sub_folder_file_is_refused_without_a_hang(
        boot: Callable[..., Initd], agent: Agent, ws: Path, canary: Canary, kind: str) -> None:
    path = ws / ".devcontainer" / "x" / "devcontainer.json"
    make = f"truncate -s 3G {path}" if kind == "huge" else f"mkfifo {path}"
    as_agent(agent, f"mkdir -p {path.parent} && {make}")
    init = boot("sh", "-c", f"echo agent-ran > {ws}/agent")
    assert init.wait(timeout=60) == 0, init.stderr
    assert (ws / "agent").read_text() == "agent-ran\n"
    assert any(str(path) in line and "cannot read" in line for line in said(init)), \
        init.stderr
    assert canary.changes() == []


@pytest.mark.slow
def test_many_sub_folders_cost_one_bounded_line(
        boot: Callable[..., Initd], agent: Agent, ws: Path) -> None:
    """3,000 sub-folders each with a devcontainer.json (and a command): none runs, one
    warning says so, and it stays one line of bounded length (root looks at 1,000
    names at most)."""
    as_agent(agent, f"cd {ws} && mkdir .devcontainer && cd .devcontainer && "
                    "for i in $(seq 1 3000); do mkdir d$i; "
                    f"echo '{{\"onCreateCommand\": \"touch {ws}/ran\"}}' > d$i/devcontainer.json; "
                    "done")
    init = boot("true")
    assert init.wait(timeout=120) == 0, init.stderr
    assert not (ws / "ran").exists()
    [line] = [e for e in said(init) if "devcontainer.json files in sub-folders" in e]
    assert len(line) < 1000 and "more" in line, line


# --- the environment the file gives


def test_forged_variables_never_reach_root_nor_change_initds_own(
        boot: Callable[..., Initd], agent: Agent, ws: Path, canary: Canary, image: str,
        tmp_path: Path) -> None:
    """containerEnv and remoteEnv naming PATH (a directory of the agent's with a ``git``
    and a ``tail``), BASH_ENV, ENV and initd's own variables: root's processes (boot's git
    for the pre-commit chain, a root session hook of the image run by bash, the drain it
    starts) never get them; the agent's INITD_* are initd's."""
    evil = Path(agent.home, "bin")
    payload = (f"#!/bin/sh\ntouch {canary.dir}/pwned-$(basename $0)\n"
               "exec /usr/bin/$(basename $0) \"$@\"\n")
    as_agent(agent, f"mkdir -p {evil} && for t in git tail; do printf '%s' '{payload}' > "
                    f"{evil}/$t; chmod 755 {evil}/$t; done && "
                    f"printf 'touch {canary.dir}/pwned-bash-env\\n' > {evil}/rc")
    forged = {"PATH": f"{evil}:/usr/bin:/bin", "BASH_ENV": f"{evil}/rc", "ENV": f"{evil}/rc",
              "INITD_SOCKET": "/tmp/forged.sock", "INITD_STATE_DIR": "/tmp/forged",
              "DISCOBOT_SESSION_ID": "forged", "SESSION_ID": "forged", "AGENT_USER": "root"}
    plant(agent, ws, {"containerEnv": forged, "remoteEnv": {"INITD_SOCKET": "/tmp/f2"},
                      "onCreateCommand": "yes | head -c 20000000"},
          ".devcontainer/devcontainer.json")
    record = tmp_path / "root-env"
    os.chmod(image, 0o755)
    hook(Path(image), "05-root", f"exec bash -c 'env > {record}'", type="session",
         run_as="root")
    init = boot("sh", "-c", f"env > {ws}/agent-env")
    assert init.wait(timeout=90) == 0, init.stderr
    root_env = dict(line.split("=", 1) for line in record.read_text().splitlines()
                    if "=" in line)
    assert "BASH_ENV" not in root_env and str(evil) not in root_env.get("PATH", "")
    agent_env = dict(line.split("=", 1) for line in (ws / "agent-env").read_text()
                     .splitlines() if "=" in line)
    assert agent_env.get("BASH_ENV") == f"{evil}/rc"  # the agent's own: it has it
    for name in ("INITD_SOCKET", "INITD_STATE_DIR", "DISCOBOT_SESSION_ID"):
        assert not agent_env.get(name, "").startswith(("/tmp/f", "forged")), name
    assert canary.changes() == [], canary.changes()
    warnings = [e for e in said(init) if "initd's own variable" in e]
    assert len(warnings) == 4, warnings  # three in containerEnv, one in remoteEnv


# --- the drain: a process of the agent's uid, which the agent may kill, stop or trace


FIND_DRAIN = ("i=0; until d=$(pgrep -u {uid} -x tail); do i=$((i+1)); "
              "[ $i -gt 1200 ] && exit 9; sleep 0.05; done; ")


@pytest.mark.slow
@pytest.mark.parametrize("attack", [
    "kill -KILL $d",
    "kill -STOP $d",
    # ptrace: make the drain write 4 MiB of its heap, and a forged marker, to root
    "gdb -p $d -batch -ex 'set $p = (char*)malloc(4194304)' "
    "-ex 'call (long)write(1, \"\\n[initd: output truncated at 0 bytes]\\n\", 38)' "
    "-ex 'call (long)write(1, $p, 4194304)' -ex detach > /dev/null 2>&1 || true",
])
def test_the_agent_killing_stopping_or_tracing_the_drain_costs_only_its_own_output(
        boot: Callable[..., Initd], agent: Agent, ws: Path, canary: Canary,
        attack: str) -> None:
    """The drain of a daemon's output (``yes &`` left by postStartCommand) is the
    agent's: what it does to it ends, at most, that output. Root's supervisor lives on
    (the agent's exit code is initd's), its memory of the output stays bounded, initd
    stops in time, and no root file changes."""
    plant(agent, ws, {"postStartCommand": "yes &", "waitFor": "postStartCommand"},
          ".devcontainer.json")
    init = boot("sh", "-c", FIND_DRAIN.format(uid=agent.uid) + attack + "; exit 7")
    assert init.wait(timeout=90) == 7, init.stderr
    assert canary.changes() == []
    log = next(agent.state.glob("*/hooks/output/devcontainer-poststartcommand.log"))
    data = log.read_bytes()
    assert data.startswith(b"y\ny\n") and len(data) <= 10 * 2**20 + 64 * 1024 + 1024
    assert b"[initd: output truncated at 10485760 bytes" in data


# --- userEnvProbe: the user's profile, which the agent writes


@pytest.mark.parametrize("profile", [".profile", ".bashrc"])
def test_the_profile_is_probed_as_the_agent_only(
        boot: Callable[..., Initd], agent: Agent, ws: Path, canary: Canary,
        profile: str) -> None:
    """The agent's profile (rustup's PATH in it) is run as the agent, never as root: the
    canary stays; what it exports reaches the commands and the agent, except initd's own
    variables. (The agent's shell is /bin/sh: a login shell reads ~/.profile, an
    interactive one $ENV, which ~/.profile points at ~/.bashrc here.)"""
    body = (f"id -u > {ws}/probe-uid-$$; touch {canary.dir}/pwned; "
            "export PATH=$HOME/.probed/bin:$PATH; export INITD_SOCKET=/tmp/forged.sock; "
            "echo noise-from-the-profile\n")
    if profile == ".bashrc":
        as_agent(agent, "printf '%s\\n' 'export ENV=$HOME/.bashrc' > ~/.profile")
    as_agent(agent, f"cat > ~/{profile} <<'EOF'\n{body}EOF")
    plant(agent, ws, {"onCreateCommand": f"echo $PATH > {ws}/cmd-path"},
          ".devcontainer/devcontainer.json")
    env = {name: value for name, value in os.environ.items()  # a container's PATH
           if not name.startswith("INITD_")}
    env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    init = boot("sh", "-c", f"echo $PATH > {ws}/agent-path; echo $INITD_SOCKET > "
                            f"{ws}/agent-socket", env=env)
    assert init.wait(timeout=60) == 0, init.stderr
    uids = {p.read_text().strip() for p in ws.glob("probe-uid-*")}
    assert uids == {str(agent.uid)}, uids
    assert canary.changes() == []
    cargo = f"{agent.home}/.probed/bin"  # (rustup: ~/.cargo/bin)
    assert (ws / "cmd-path").read_text().split(":")[0] == cargo
    assert (ws / "agent-path").read_text().split(":")[0] == cargo
    assert (ws / "agent-socket").read_text().strip() != "/tmp/forged.sock"
