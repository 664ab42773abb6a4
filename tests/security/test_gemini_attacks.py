"""Gemini CLI's hook files and line, attacked by the agent (invariants 8, 12, 15): the
variables that name the image's system settings (GEMINI_CLI_SYSTEM_SETTINGS_PATH), the
agent's own .gemini/settings.json rewritten after the start or left as a link, a FIFO, a
huge or broken file, and initd's own line with more shell code on it.

Each case acts as the agent user (initd booted as PID 1 with --user, the agent calling
``initd emit --from gemini`` as Gemini CLI does), and its guard's answer, or a root-owned
canary, proves the outcome."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.attack import Agent, Canary, agent_script, as_agent
from tests.support.harness import Initd, _clean_env

pytestmark = pytest.mark.timeout(180)

VARIABLE = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"


def guard(why: str, event: str = "BeforeTool") -> str:
    return json.dumps({"hooks": {event: [{"matcher": "run_shell_command", "hooks": [
        {"type": "command", "command": f"echo '{why}' >&2; exit 2"}]}]}})


RM = json.dumps({"session_id": "s-1", "transcript_path": "", "cwd": "/", "timestamp":
                 "2026-09-25T10:00:00.000Z", "hook_event_name": "BeforeTool",
                 "tool_name": "run_shell_command", "tool_input": {"command": "rm -rf /data"}})
ASK = """
    import json, subprocess, sys
    out = subprocess.run([sys.executable, "-m", "initd", "emit", "--from", "gemini"],
                         input=sys.argv[1], capture_output=True, text=True, timeout=120)
    print(json.dumps({"code": out.returncode, "out": out.stdout, "err": out.stderr}),
          flush=True)
"""
REWRITE = """
    import json, subprocess, sys
    with open(sys.argv[2], "w") as f:  # the guard gone, then the rm
        f.write("{}")
    out = subprocess.run([sys.executable, "-m", "initd", "emit", "--from", "gemini"],
                         input=sys.argv[1], capture_output=True, text=True, timeout=120)
    print(json.dumps({"code": out.returncode, "out": out.stdout, "err": out.stderr}),
          flush=True)
"""


def answered(init: Initd) -> tuple[bool, str]:
    """(blocked, what the answer says) as Gemini CLI reads it: exit 2 with the reason on
    stderr, or decision deny (or block) with its reason."""
    assert init.wait(timeout=150) == 0, init.stderr[-3000:]
    got = json.loads(init.stdout_lines[-1])
    if got["code"] == 2:
        return True, got["err"]
    assert got["code"] == 0, got
    data = json.loads(got["out"]) if got["out"].strip() else {}
    return data.get("decision") in ("deny", "block"), json.dumps(data)


def put(agent: Agent | None, path: Path, text: str) -> Path:
    """``text`` at ``path``, written by ``agent`` (None: root's, 0644)."""
    if agent is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o644)
        return path
    as_agent(agent, f"mkdir -p {path.parent} && cat > {path} <<'EOF'\n{text}\nEOF")
    return path


@pytest.fixture
def root_dir() -> Iterator[Path]:
    """A directory of root's that the agent can read (0755): the image's."""
    path = Path(tempfile.mkdtemp(prefix="initd-atk-image-etc-"))
    path.chmod(0o755)
    yield path
    subprocess.run(["rm", "-rf", str(path)], check=False)


def booted(boot: Callable[..., Initd], script: str, *args: str,
           env: dict[str, str] | None = None) -> Initd:
    return boot(sys.executable, agent_script(script), *args,
                env={**_clean_env(), **(env or {})})


# --- the variables that name the image's system settings


@pytest.mark.parametrize("named", ["the agent's file", "a root file of the image's"])
def test_the_workspace_cannot_swap_the_images_system_settings(
        boot: Callable[..., Initd], agent: Agent, ws: Path, root_dir: Path,
        named: str) -> None:
    """The image names its system settings (initd's own environment); devcontainer.json's
    containerEnv, which the agent writes, names another file, with no guard: one of its
    own, or a root file the image happens to have. The image's guard still holds: the
    service never takes these variables from containerEnv (before: it did, and the rm
    went through)."""
    system = put(None, root_dir / "settings.json", guard("the image says no"))
    other = put(None, root_dir / "other.json", "{}") if named != "the agent's file" \
        else put(agent, ws / "mine.json", "{}")
    put(agent, ws / ".devcontainer" / "devcontainer.json",
        json.dumps({"containerEnv": {VARIABLE: str(other)}}))
    blocked, said = answered(booted(boot, ASK, RM, env={VARIABLE: str(system)}))
    assert blocked and "the image says no" in said, said


@pytest.mark.parametrize("how", ["the agent's file", "root's file in the agent's directory",
                                 "root's link to the agent's file"])
def test_a_named_file_another_user_can_change_is_not_read(
        boot: Callable[..., Initd], agent: Agent, ws: Path, root_dir: Path,
        how: str) -> None:
    """The image names its system settings where the agent can write (a mistake): the
    agent turns every hook off there (hooksConfig.enabled: false, which the system file
    decides for every level). initd does not read it, says why, and the workspace's guard
    still runs (before: the file was read, and the rm went through)."""
    off = json.dumps({"hooksConfig": {"enabled": False}})
    if how == "the agent's file":
        named = put(agent, ws / "system.json", off)
    elif how == "root's file in the agent's directory":
        named = put(None, ws / "system.json", off)
    else:
        named = root_dir / "link.json"
        named.symlink_to(put(agent, ws / "system.json", off))
    put(agent, ws / ".gemini" / "settings.json", guard("the project says no"))
    init = booted(boot, ASK, RM, env={VARIABLE: str(named)})
    blocked, said = answered(init)
    assert blocked and "the project says no" in said, said
    assert f"{VARIABLE}" in init.stderr and "not read" in init.stderr, init.stderr[-3000:]


def test_root_never_follows_the_agents_link_through_the_variable(
        agent: Agent, ws: Path, tmp_path: Path) -> None:
    """A person runs ``initd hooks list`` as root with the image's variable naming a path
    where the agent planted a link to a root secret shaped as Gemini settings: root does
    not read it (the link is the agent's), and nothing of the secret is shown."""
    vault = Path(tempfile.mkdtemp(prefix="initd-atk-vault-"))  # root's, 0700
    spot = Path(tempfile.mkdtemp(prefix="initd-atk-spot-"))
    try:
        token = secrets.token_hex(16)
        secret = vault / "gemini.json"
        secret.write_text(json.dumps({"hooks": {"BeforeTool": [{"hooks": [
            {"type": "command", "command": f"echo {token}"}]}]}}))
        secret.chmod(0o600)
        before = secret.read_bytes()
        os.chown(spot, agent.uid, agent.gid)
        as_agent(agent, f"ln -s {secret} {spot}/settings.json")
        done = subprocess.run(
            [sys.executable, "-m", "initd", "hooks", "list", "--workspace", str(ws)],
            capture_output=True, text=True, timeout=100, cwd="/",
            env={**_clean_env(), "HOME": str(tmp_path), VARIABLE: f"{spot}/settings.json"})
        said = done.stdout + done.stderr
        assert token not in said, said
        assert VARIABLE in said and "not root's" in said, said
        assert secret.read_bytes() == before and secret.stat().st_uid == 0
    finally:
        subprocess.run(["rm", "-rf", str(spot), str(vault)], check=False)


# --- the agent's own settings files: the snapshot of the start (invariant 15)


@pytest.mark.parametrize("level", ["project", "user"])
def test_the_agents_rewrite_of_its_settings_waits_for_the_next_start(
        boot: Callable[..., Initd], agent: Agent, ws: Path, level: str) -> None:
    """The agent removes the guard of its .gemini/settings.json (the project's, or its
    home's) and runs rm: the guard of the start answers (before .gemini/settings.json was
    a source of the snapshot, the file was read as it is now: the rm went through)."""
    path = (ws if level == "project" else Path(agent.home)) / ".gemini" / "settings.json"
    put(agent, path, guard(f"the {level} says no"))
    blocked, said = answered(booted(boot, REWRITE, RM, str(path)))
    assert blocked and f"the {level} says no" in said, said
    assert path.read_text() == "{}"  # (the agent did rewrite it)


PLANTS = ["fifo", "link to a root secret", "link to /dev/zero", "huge", "a directory",
          "a loop of links", "not JSON", "a comment never closed"]


@pytest.mark.parametrize("how", PLANTS)
def test_what_the_agent_left_as_its_settings_costs_nothing_and_blocks(
        boot: Callable[..., Initd], agent: Agent, ws: Path, canary: Canary,
        how: str) -> None:
    """What the agent left at .gemini/settings.json in an earlier session: the start goes
    on, nothing of a root file is shown, and BeforeTool is blocked (a guard file initd
    cannot read is that guard's error: invariant 12)."""
    path = ws / ".gemini" / "settings.json"
    as_agent(agent, f"mkdir -p {path.parent} && rm -rf {path}")
    as_agent(agent, {
        "fifo": f"mkfifo {path}", "link to a root secret": f"ln -s {canary.secret} {path}",
        "link to /dev/zero": f"ln -s /dev/zero {path}",
        "huge": f"printf '%s' '{guard('x')}' > {path} && truncate -s 64M {path}",
        "a directory": f"mkdir {path}",
        "a loop of links": f"ln -s {path}.b {path} && ln -s {path} {path}.b",
        "not JSON": f"printf 'hooks: [BeforeTool' > {path}",
        "a comment never closed": f"printf '{{\"hooks\": {{}} /* ' > {path}"}[how])
    init = booted(boot, ASK, RM)
    blocked, said = answered(init)
    assert blocked and "settings.json" in said, said
    assert canary.token not in init.stderr + said
    assert canary.changes() == []


# --- initd's own line in the agent's file


@pytest.mark.parametrize("more", ["; touch {m}", " && touch {m}", " --socket /x$(touch {m})",
                                  " >/dev/null; touch {m}"])
def test_initds_line_with_more_on_it_runs_as_a_hook(
        boot: Callable[..., Initd], agent: Agent, ws: Path, more: str) -> None:
    """initd's own line in ~/.gemini/settings.json is the way in, not a hook; with more
    shell code on it, it is a hook like any other, and runs (its marker is there)."""
    marker = ws / "ran"
    line = f"{sys.executable} -m initd emit --from gemini --socket /nonexistent/s.sock"
    settings = {"hooks": {"BeforeTool": [{"hooks": [
        {"type": "command", "command": line + more.format(m=marker)}]}]}}
    put(agent, Path(agent.home) / ".gemini" / "settings.json", json.dumps(settings))
    answered(booted(boot, ASK, RM))
    assert marker.exists()
