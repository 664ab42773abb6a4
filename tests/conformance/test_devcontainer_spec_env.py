"""devcontainer.json's environment and users as the Dev Container specification states them
(`containerEnv`, `remoteEnv`, the variables, `userEnvProbe`, `remoteUser`/`containerUser`),
case by case, each with its passage; initd booted as PID 1 for a real agent user.
test_devcontainer_spec.py says where the passages come from and how the cases observe.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.devcontainer_support import (  # fixtures and helpers
    agent,
    boot,
    config,
    image,
    put,
    rec,
    sid,
    ws,
)
from tests.support.attack import Agent, agent_script, hook
from tests.support.harness import _clean_env

pytestmark = pytest.mark.timeout(300)
__all__ = ["agent", "boot", "image", "rec", "sid", "ws"]  # (fixtures used by name)


def has_container_env(path: Path) -> None:
    seen = env_of(path).get("DCSPEC_CONTAINER")
    assert seen == "from-container-env", \
        f"{path.stem}: containerEnv's DCSPEC_CONTAINER is {seen!r} in its environment"


def env_of(path: Path) -> dict[str, str]:
    """What ``env > path`` wrote (one variable a line; no value here spans lines)."""
    assert path.exists(), f"{path.name} was never written: the process did not run"
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    return {name: value for name, value in pairs}


def dump(rec: Path, name: str) -> str:
    return f"env > {rec}/{name}.env"


# --- containerEnv: the whole container


CONTAINER_ENV = {"DCSPEC_CONTAINER": "from-container-env"}


def test_container_env_reaches_every_stage_and_the_agent(boot, agent: Agent, ws: Path,
                                                         rec: Path) -> None:
    """https://containers.dev/implementors/json_reference/#general-properties, `containerEnv`:
    "`containerEnv` will set the variable on the Docker container itself, so all processes
    spawned in the container will have access to it." """
    config(ws, agent, {"containerEnv": CONTAINER_ENV,
                       "onCreateCommand": dump(rec, "onCreateCommand"),
                       "updateContentCommand": ["sh", "-c", dump(rec, "updateContentCommand")],
                       "postCreateCommand": {"x": dump(rec, "postCreateCommand")},
                       "postStartCommand": dump(rec, "postStartCommand"),
                       "waitFor": "postStartCommand"})
    init = boot("sh", "-c", dump(rec, "agent"))
    assert init.wait(120) == 0, init.stderr
    for who in ("onCreateCommand", "updateContentCommand", "postCreateCommand",
                "postStartCommand", "agent"):
        assert env_of(rec / f"{who}.env").get("DCSPEC_CONTAINER") == "from-container-env", who


def test_container_env_reaches_a_session_hook(boot, agent: Agent, ws: Path, rec: Path) -> None:
    """json_reference, `containerEnv`: "all processes spawned in the container will have access
    to it. But it will also be static for the life of the container"; so a discobot session
    hook (run as the agent at boot) has it too."""
    config(ws, agent, {"containerEnv": CONTAINER_ENV})
    hook(ws / ".discobot" / "hooks", "dcspec-env.sh", dump(rec, "session"), owner=agent,
         type="session")
    init = boot("true")
    assert init.wait(120) == 0, init.stderr
    has_container_env(rec / "session.env")


EMIT = """
    import json, subprocess, sys
    from tests.support.agent_side import service_pid
    service_pid(timeout=60)
    data = json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}})
    out = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data", data],
                         capture_output=True, text=True, timeout=120)
    print(out.returncode, out.stdout, out.stderr, flush=True)
"""


def test_container_env_reaches_a_discobot_event_hook(boot, agent: Agent, ws: Path,
                                                     rec: Path) -> None:
    """json_reference, `containerEnv`: "all processes spawned in the container will have access
    to it." An event hook the hook service runs (the agent's `initd emit pre_tool`) is one."""
    config(ws, agent, {"containerEnv": CONTAINER_ENV})
    hook(ws / ".discobot" / "hooks", "dcspec-env.sh", dump(rec, "event"), owner=agent,
         type="pre_tool")
    init = boot(sys.executable, agent_script(EMIT))
    assert init.wait(180) == 0, init.stderr
    has_container_env(rec / "event.env")


def test_container_env_reaches_a_claude_code_hook(boot, agent: Agent, ws: Path,
                                                  rec: Path) -> None:
    """json_reference, `containerEnv`: "all processes spawned in the container will have access
    to it." A Claude Code PreToolUse hook (`.claude/settings.json`) fired by `initd emit` is
    one."""
    config(ws, agent, {"containerEnv": CONTAINER_ENV})
    put(ws, agent, ".claude/settings.json", {"hooks": {"PreToolUse": [{
        "matcher": "Bash", "hooks": [{"type": "command", "command": dump(rec, "claude")}]}]}})
    init = boot(sys.executable, agent_script(EMIT))
    assert init.wait(180) == 0, init.stderr
    has_container_env(rec / "claude.env")


# --- remoteEnv: the tool's processes (the agent) and the lifecycle scripts


def test_remote_env_reaches_the_commands_and_the_agent(boot, agent: Agent, ws: Path,
                                                       rec: Path) -> None:
    """json_reference, `remoteEnv`: "A set of name-value pairs that sets or overrides
    environment variables for the `devcontainer.json` supporting service / tool (or
    sub-processes like terminals)"; the schema: "Remote environment variables to set for
    processes spawned in the container including lifecycle scripts and any remote editor/IDE
    server process." The agent is the process the tool starts."""
    config(ws, agent, {"remoteEnv": {"DCSPEC_REMOTE": "from-remote-env"},
                       "onCreateCommand": dump(rec, "onCreateCommand"),
                       "postStartCommand": ["sh", "-c", dump(rec, "postStartCommand")],
                       "waitFor": "postStartCommand"})
    init = boot("sh", "-c", dump(rec, "agent"))
    assert init.wait(120) == 0, init.stderr
    for who in ("onCreateCommand", "postStartCommand", "agent"):
        assert env_of(rec / f"{who}.env").get("DCSPEC_REMOTE") == "from-remote-env", who


def test_remote_env_overrides_container_env(boot, agent: Agent, ws: Path, rec: Path) -> None:
    """json_reference, `remoteEnv`: "sets or overrides environment variables for the
    `devcontainer.json` supporting service / tool"; https://containers.dev/implementors/spec/
    #environment-variables: Remote variables "are added after the container's `ENTRYPOINT` has
    fired"."""
    config(ws, agent, {"containerEnv": {"DCSPEC_BOTH": "container"},
                       "remoteEnv": {"DCSPEC_BOTH": "remote"},
                       "onCreateCommand": dump(rec, "onCreateCommand")})
    init = boot("sh", "-c", dump(rec, "agent"))
    assert init.wait(120) == 0, init.stderr
    for who in ("onCreateCommand", "agent"):
        assert env_of(rec / f"{who}.env").get("DCSPEC_BOTH") == "remote", who


def test_remote_env_extends_the_containers_path(boot, agent: Agent, ws: Path,
                                                rec: Path) -> None:
    """https://containers.dev/implementors/json_reference/#variables-in-devcontainerjson,
    `${containerEnv:VARIABLE_NAME}`: "Value of an existing environment variable inside the
    container once it is up and running [...] For example: `"remoteEnv": { "PATH":
    "${containerEnv:PATH}:/some/other/path" }`"."""
    config(ws, agent, {"remoteEnv": {"PATH": "${containerEnv:PATH}:/dcspec/other/path"},
                       "onCreateCommand": dump(rec, "onCreateCommand")})
    init = boot("sh", "-c", dump(rec, "agent"))
    assert init.wait(120) == 0, init.stderr
    for who in ("onCreateCommand", "agent"):
        path = env_of(rec / f"{who}.env")["PATH"].split(":")
        assert path[-1] == "/dcspec/other/path" and "/usr/bin" in path[:-1], (who, path)


# --- variables


def test_local_env_variables(boot, agent: Agent, ws: Path, rec: Path) -> None:
    """json_reference, #variables-in-devcontainerjson, `${localEnv:VARIABLE_NAME}`: "Value of an
    environment variable on the **host machine** [...] Unset variables are left blank. [...] A
    default value for when the environment variable is not set can be given with
    `${localEnv:VARIABLE_NAME:default_value}`." initd's own environment is the only host it
    has."""
    config(ws, agent, {"containerEnv": {"DCSPEC_SET": "${localEnv:DCSPEC_HOST}",
                                        "DCSPEC_BLANK": "[${localEnv:DCSPEC_NOT_SET}]",
                                        "DCSPEC_DEFAULT": "${localEnv:DCSPEC_NOT_SET:fallback}"},
                       "onCreateCommand": dump(rec, "onCreateCommand")})
    init = boot("sh", "-c", dump(rec, "agent"), env={**_clean_env(), "DCSPEC_HOST": "host-v"})
    assert init.wait(120) == 0, init.stderr
    for who in ("onCreateCommand", "agent"):
        seen = env_of(rec / f"{who}.env")
        assert (seen.get("DCSPEC_SET"), seen.get("DCSPEC_BLANK"), seen.get("DCSPEC_DEFAULT")) \
            == ("host-v", "[]", "fallback"), who


def test_container_env_variables_in_remote_env(boot, agent: Agent, ws: Path, rec: Path) -> None:
    """json_reference, #variables-in-devcontainerjson, `${containerEnv:VARIABLE_NAME}` (for
    `remoteEnv`): "Value of an existing environment variable inside the container once it is
    up and running [...] A default value for when the environment variable is not set can be
    given with `${containerEnv:VARIABLE_NAME:default_value}`." A `containerEnv` variable is
    one of the container's."""
    config(ws, agent, {"containerEnv": {"DCSPEC_INNER": "inner"},
                       "remoteEnv": {"DCSPEC_OUTER": "${containerEnv:DCSPEC_INNER}-outer",
                                     "DCSPEC_DFLT": "${containerEnv:DCSPEC_NOT_SET:dflt}"},
                       "onCreateCommand": dump(rec, "onCreateCommand")})
    init = boot("sh", "-c", dump(rec, "agent"))
    assert init.wait(120) == 0, init.stderr
    for who in ("onCreateCommand", "agent"):
        seen = env_of(rec / f"{who}.env")
        assert (seen.get("DCSPEC_OUTER"), seen.get("DCSPEC_DFLT")) == ("inner-outer", "dflt"), who


def test_workspace_folder_variables(boot, agent: Agent, ws: Path, rec: Path) -> None:
    """json_reference, #variables-in-devcontainerjson: `${containerWorkspaceFolder}`: "The path
    that the workspaces files can be found in the container."; `${containerWorkspaceFolder
    Basename}`: "Name of the folder where the workspace files can be found in the container."
    Both for "Any" property: here a string command, an array command and `containerEnv`."""
    config(ws, agent, {
        "containerEnv": {"DCSPEC_WS": "${containerWorkspaceFolder}"},
        "onCreateCommand": f"echo '${{containerWorkspaceFolder}}|"
                           f"${{containerWorkspaceFolderBasename}}' > {rec}/string",
        "updateContentCommand": ["touch", f"{rec}/${{containerWorkspaceFolderBasename}}.array"],
        "postCreateCommand": dump(rec, "postCreateCommand"),
        "waitFor": "postCreateCommand"})
    init = boot("true")
    assert init.wait(120) == 0, init.stderr
    assert (rec / "string").read_text() == f"{ws}|{ws.name}\n"
    assert (rec / f"{ws.name}.array").exists(), sorted(p.name for p in rec.iterdir())
    assert env_of(rec / "postCreateCommand.env").get("DCSPEC_WS") == str(ws)


# --- userEnvProbe


@pytest.fixture
def profile_path(agent: Agent) -> Iterator[Path]:
    """The agent's ~/.profile puts ~/.dcspec-bin on PATH, as rustup's or nvm's installer
    does; restored afterwards."""
    profile = Path(agent.home, ".profile")
    before = profile.read_bytes() if profile.exists() else None
    tools = Path(agent.home, ".dcspec-bin")
    tools.mkdir(exist_ok=True)
    tool = tools / "dcspec-tool"
    tool.write_text('#!/bin/sh\ntouch "$1"\n')
    tool.chmod(0o755)
    for made in (tools, tool):
        os.chown(made, agent.uid, agent.gid)
    with profile.open("a") as f:
        f.write('\nexport PATH="$HOME/.dcspec-bin:$PATH"\n')
    os.chown(profile, agent.uid, agent.gid)
    yield tools
    shutil.rmtree(tools, ignore_errors=True)
    if before is None:
        profile.unlink(missing_ok=True)
    else:
        profile.write_bytes(before)


def test_user_env_probe_default_gives_the_commands_the_login_profiles_path(
        boot, agent: Agent, ws: Path, rec: Path, profile_path: Path) -> None:
    """json_reference, `userEnvProbe`: "Indicates the type of shell to use to "probe" for user
    environment variables to include in `devcontainer.json` supporting services' / tools'
    processes: `none`, `interactiveShell`, `loginShell`, or `loginInteractiveShell` (default).
    [...] login shells usually include variables from `/etc/profile` and `~/.profile`."
    https://containers.dev/implementors/spec/#environment-variables: ""probed" environment
    variables should be merged with Remote environment variables for any processes the
    implementer injects after the container is created." No `userEnvProbe` in the file: the
    default."""
    config(ws, agent, {"onCreateCommand": f"echo \"$PATH\" > {rec}/path && "
                                          f"dcspec-tool {rec}/string-found-it",
                       "updateContentCommand": ["dcspec-tool", f"{rec}/array-found-it"]})
    init = boot("true")
    assert init.wait(120) == 0, init.stderr
    path = (rec / "path").read_text().strip().split(":")
    assert str(profile_path) in path, f"{profile_path} is not on the commands' PATH {path}"
    assert (rec / "string-found-it").exists(), init.stderr
    assert (rec / "array-found-it").exists(), init.stderr


def test_user_env_probe_none_probes_nothing(boot, agent: Agent, ws: Path, rec: Path,
                                            profile_path: Path) -> None:
    """json_reference, `userEnvProbe`: "`none`" is one of its values: no shell probes the
    user's profile, so its PATH entry is not the commands'."""
    config(ws, agent, {"userEnvProbe": "none", "onCreateCommand": dump(rec, "onCreateCommand")})
    init = boot("true")
    assert init.wait(120) == 0, init.stderr
    assert str(profile_path) not in env_of(rec / "onCreateCommand.env")["PATH"].split(":")


# --- users


@pytest.fixture
def root_state() -> Iterator[str]:
    """A state directory of root's for initd run without --user (never the real home's)."""
    path = tempfile.mkdtemp(prefix="initd-dcspec-state-")
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_the_commands_run_as_the_agent_user_by_default(boot, agent: Agent, ws: Path,
                                                       rec: Path) -> None:
    """https://containers.dev/implementors/spec/#users: "**Remote User**: Used to run the
    lifecycle scripts inside the container. [...] Set using the `remoteUser` property in all
    cases and defaults to the container user." The container's processes run as the agent
    user (--user)."""
    config(ws, agent, {"onCreateCommand": f"id -un > {rec}/who"})
    init = boot("true")
    assert init.wait(120) == 0, init.stderr
    assert (rec / "who").read_text().strip() == agent.name


@pytest.mark.parametrize("key", ["remoteUser", "containerUser"])
def test_a_named_user_runs_the_commands(boot, agent: Agent, ws: Path, rec: Path,
                                        root_state: str, key: str) -> None:
    """https://containers.dev/implementors/spec/#users: "**Remote User**: Used to run the
    lifecycle scripts inside the container. [...] Set using the `remoteUser` property in all
    cases and defaults to the container user."; the schema, `remoteUser`: "The username to
    use for spawning processes in the container including lifecycle scripts". initd runs as
    root (no --user): naming the agent's user drops to it."""
    config(ws, agent, {key: agent.name, "onCreateCommand": f"id -un > {rec}/who"})
    init = boot("true", user=False, more=("--state-dir", root_state))
    assert init.wait(120) == 0, init.stderr
    assert (rec / "who").read_text().strip() == agent.name, init.stderr


# --- initd's own variables


def test_initd_variables_are_never_changed_by_the_file(boot, agent: Agent, ws: Path,
                                                       rec: Path) -> None:
    """https://containers.dev/implementors/spec/#environment-variables: Remote variables "are
    added after the container's `ENTRYPOINT` has fired": initd is that entrypoint, and its
    own settings (INITD_*) are the container engine's, not the file's. Neither `containerEnv`
    nor `remoteEnv` sets, changes or unsets one, for the commands or for the agent: what
    the agent sees is what it sees with no devcontainer.json at all."""
    env = {**_clean_env(), "INITD_GRACE": "8"}
    initd_vars = "env | grep '^INITD_' | sort"
    baseline = boot("sh", "-c", f"{initd_vars} > {rec}/baseline", env=env)
    assert baseline.wait(120) == 0, baseline.stderr
    config(ws, agent, {
        "containerEnv": {"INITD_SOCKET": "/tmp/dcspec-elsewhere.sock",
                         "INITD_DCSPEC_PLANTED": "from-the-file"},
        "remoteEnv": {"INITD_GRACE": None, "INITD_RESTART": "always",
                      "INITD_DCSPEC_REMOTE": "from-the-file"},
        "onCreateCommand": f"{initd_vars} > {rec}/command"})
    init = boot("sh", "-c", f"{initd_vars} > {rec}/agent", env=env)
    assert init.wait(120) == 0, init.stderr
    baseline_vars = env_of(rec / "baseline")
    assert baseline_vars.get("INITD_SOCKET") == baseline.socket, baseline_vars
    assert baseline_vars.get("INITD_GRACE") == "8", baseline_vars
    expected = {**baseline_vars, "INITD_SOCKET": init.socket}  # (each boot's socket its own)
    assert env_of(rec / "agent") == expected
    command = env_of(rec / "command")
    assert command.get("INITD_SOCKET") == init.socket, command
    assert command.get("INITD_GRACE") == "8", command
    assert not {"INITD_DCSPEC_PLANTED", "INITD_DCSPEC_REMOTE"} & set(command), command
    assert command.get("INITD_RESTART") == expected.get("INITD_RESTART"), command

