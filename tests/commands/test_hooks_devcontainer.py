"""`initd hooks list|check|trust` and devcontainer.json: each command with its stage,
when it runs, as whom; waitFor; what is not run; a broken file fails the check."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

INITD = [sys.executable, "-m", "initd", "hooks"]

FILE = """{
  // JSONC: comments and trailing commas
  "onCreateCommand": "npm ci",
  "updateContentCommand": ["make", "deps", ],
  "postCreateCommand": {"db": "service postgresql start", "web": ["npm", "start"]},
  "postStartCommand": "nohup ./serve &",
  "postAttachCommand": "code .",
  "remoteUser": "root",
  "remoteEnv": {"PATH": "${containerEnv:PATH}:/x"},
}
"""


def hooks_cmd(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*INITD, *args, "--workspace", str(ws), "--hooks-dir",
                           str(ws / "no-image-hooks")], capture_output=True, text=True,
                          timeout=30, cwd=ws)


def write(ws: Path, text: str) -> Path:
    path = ws / ".devcontainer" / "devcontainer.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_list_shows_each_command_with_its_stage_and_user(tmp_path: Path) -> None:
    path = write(tmp_path, FILE)
    out = hooks_cmd(tmp_path, "list")
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines() if line.startswith("devcontainer ")]
    assert [row[:2] for row in rows] == [
        ["devcontainer", "onCreateCommand"], ["devcontainer", "updateContentCommand"],
        ["devcontainer", "postCreateCommand.db"], ["devcontainer", "postCreateCommand.web"],
        ["devcontainer", "postStartCommand"], ["devcontainer", "postAttachCommand"]]
    lines = out.stdout.splitlines()
    on_create = next(line for line in lines if " onCreateCommand " in line)
    assert "once per container, before the agent" in on_create
    assert on_create.endswith(f"root    {path}  (string) npm ci")
    assert next(line for line in lines if "updateContentCommand " in line).endswith(
        "(array) make deps")
    assert "every start, in the background" in next(
        line for line in lines if "postStartCommand " in line)
    assert "devcontainer: waitFor updateContentCommand: the agent starts after " \
        "onCreateCommand, updateContentCommand; the later stages run in the background, " \
        "in order; a failed stage stops the ones after it" in lines
    assert "devcontainer: the commands run as root (remoteUser 'root')" in lines
    assert "every start, once the agent is up" in next(
        line for line in lines if "postAttachCommand " in line)
    assert not [line for line in lines if "not run" in line]


def test_list_json(tmp_path: Path) -> None:
    path = write(tmp_path, FILE)
    data = json.loads(hooks_cmd(tmp_path, "list", "--json").stdout)["devcontainer"]
    assert data["file"] == str(path) and data["waitFor"] == "updateContentCommand"
    assert data["runAs"] == "root" and data["runAsFrom"] == "remoteUser"
    assert [(c["stage"], c["name"], c["form"], c["command"], c["waited"], c["once"])
            for c in data["commands"]] == [
        ("onCreateCommand", None, "string", ["npm ci"], True, True),
        ("updateContentCommand", None, "array", ["make", "deps"], True, True),
        ("postCreateCommand", "db", "string", ["service postgresql start"], False, True),
        ("postCreateCommand", "web", "array", ["npm", "start"], False, True),
        ("postStartCommand", None, "string", ["nohup ./serve &"], False, False),
        ("postAttachCommand", None, "string", ["code ."], False, False)]
    assert data["notRun"] == []
    assert data["remoteEnv"] == {"PATH": "${containerEnv:PATH}:/x"}
    assert data["enabled"] is True
    assert json.loads(hooks_cmd(tmp_path / ".devcontainer", "list", "--json").stdout)[
        "devcontainer"] is None


def test_a_non_root_agent_is_shown_running_them_itself() -> None:
    if os.geteuid() != 0:
        pytest.skip("runs the listing as another user")
    ws = Path(tempfile.mkdtemp(prefix="initd-dc-list-"))
    ws.chmod(0o755)
    write(ws, '{"remoteUser": "root", "onCreateCommand": "x"}')
    (ws / ".devcontainer").chmod(0o755)
    try:
        out = subprocess.run([*INITD, "list", "--workspace", str(ws), "--hooks-dir",
                              str(ws / "none")], capture_output=True, text=True, timeout=30,
                             user="nobody", cwd="/", env={**os.environ, "HOME": "/"})
    finally:
        shutil.rmtree(ws)
    assert out.returncode == 0, out.stderr
    assert "devcontainer: the commands run as nobody (remoteUser 'root')" in out.stdout
    assert "remoteUser 'root': the commands run as the agent user 'nobody' instead" in \
        out.stdout


def test_check_fails_on_a_broken_file_naming_file_and_key(tmp_path: Path) -> None:
    path = write(tmp_path, '{"onCreateCommand": 5, "postStartCommand": "ok"}')
    out = hooks_cmd(tmp_path, "check")
    assert out.returncode == 1
    assert f"error: {path}: onCreateCommand: expected a string (run by /bin/sh -c) or an " \
        "array of strings (run without a shell), or an object of named commands (run in " \
        "parallel), got a number 5" in out.stdout
    assert out.stdout.splitlines()[-1] == "0 hook(s) valid, 1 error(s)"
    listed = hooks_cmd(tmp_path, "list")
    assert listed.returncode == 0 and f"error: {path}: onCreateCommand: " in listed.stdout
    path.write_text("{ not json")
    out = hooks_cmd(tmp_path, "check")
    assert out.returncode == 1 and f"error: {path}: not valid JSON with comments: " in out.stdout
    write(tmp_path, FILE)
    out = hooks_cmd(tmp_path, "check")
    assert out.returncode == 0, out.stdout
    assert out.stdout.splitlines()[-1] == "6 hook(s) valid, 0 error(s)"  # (6 commands)


def test_trust_records_each_stage_and_the_environment(tmp_path: Path) -> None:
    write(tmp_path, FILE)
    out = hooks_cmd(tmp_path, "trust", "--trust-file", str(tmp_path / "trust.json"))
    assert out.returncode == 0, out.stderr
    approved = [line.split(None, 1) for line in out.stdout.splitlines()[:-1]]
    assert [state for state, _ in approved] == ["new"] * 6
    assert [label.split(" (")[0] for _, label in approved] == [
        "devcontainer onCreateCommand", "devcontainer updateContentCommand",
        "devcontainer postCreateCommand", "devcontainer postStartCommand",
        "devcontainer postAttachCommand", "devcontainer containerEnv and remoteEnv"]
    again = hooks_cmd(tmp_path, "trust", "--trust-file", str(tmp_path / "trust.json"))
    assert [line.split()[0] for line in again.stdout.splitlines()[:-1]] == ["unchanged"] * 6
