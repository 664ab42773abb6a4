"""`initd hooks list|check|run`: what a person (or CI) sees of the workspace's hooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.commands import hooks
from initd.errors import InitdError
from tests.hooks.support import add_hook, forget_session

INITD = [sys.executable, "-m", "initd", "hooks"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    hooks = tmp_path / ".discobot" / "hooks"
    add_hook(hooks, "10-setup.sh", "echo set up; exit 4", type="session", name="Setup",
             run_as="root")
    add_hook(hooks, "20-fmt.sh", "true", type="file", pattern="*.go", notify_llm=False)
    add_hook(hooks, "30-typo.sh", "true", type="sesion")
    (hooks / "README.md").write_text("# hooks\n")
    return tmp_path


@pytest.fixture(autouse=True)
def forget_the_cli_session() -> Iterator[None]:
    """`hooks run` below keeps its status in the session "cli-run": not left behind."""
    yield
    forget_session("cli-run")


def hooks_cmd(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*INITD, *args, "--workspace", str(ws), "--hooks-dir",
                           str(ws / "no-image-hooks")], capture_output=True, text=True,
                          timeout=30, cwd=ws)


def test_list_shows_hooks_and_why_other_files_are_not(ws: Path) -> None:
    out = hooks_cmd(ws, "list")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:4] == ["ID", "TYPE", "RUN", "AS"]
    assert lines[1].split()[:4] == ["10-setup", "session", "root", "timeout=300s"]
    assert "pattern=*.go notify_llm=false" in lines[2]
    assert any(line.startswith("error: ") and "30-typo.sh" in line and "'sesion'" in line
               for line in lines)
    assert any(line.startswith("note: ") and "README.md" in line for line in lines)


def test_list_json(ws: Path) -> None:
    data = json.loads(hooks_cmd(ws, "list", "--json").stdout)
    assert [h["id"] for h in data["hooks"]] == ["10-setup", "20-fmt"]
    assert {p["severity"] for p in data["skipped"]} == {"error", "note"}


def test_check_fails_with_every_error_listed(ws: Path) -> None:
    """The README, which `list` notes, is one too: a file of a hooks directory that will
    not run (issue 36)."""
    add_hook(ws / ".discobot" / "hooks", "40-neg.sh", "true", type="session", timeout=-1)
    out = hooks_cmd(ws, "check")
    assert out.returncode == 1
    errors = [line for line in out.stdout.splitlines() if line.startswith("error:")]
    assert len(errors) == 3
    assert any("timeout: expected a number of seconds > 0" in line for line in errors)
    assert errors[-1] == (f"error: {ws}/.discobot/hooks/README.md: no front matter (---, #--- "
                          "or //--- on line 1 or 2): not a hook (it will not run: a hooks "
                          "directory holds hooks only)")
    assert out.stdout.splitlines()[-1] == "2 hook(s) valid, 3 error(s)"


def test_check_passes_a_clean_workspace(ws: Path) -> None:
    (ws / ".discobot" / "hooks" / "30-typo.sh").unlink()
    (ws / ".discobot" / "hooks" / "README.md").unlink()
    out = hooks_cmd(ws, "check")
    assert (out.returncode, out.stdout.splitlines()[-1]) == (0, "2 hook(s) valid, 0 error(s)")


def test_run_runs_one_hook_and_exits_with_its_code(ws: Path) -> None:
    out = hooks_cmd(ws, "run", "Setup", "--session-id", "cli-run")
    assert out.returncode == 4
    assert out.stdout == "set up\n"
    assert "hook failed" in out.stderr


def test_run_unknown_hook_is_125_naming_the_known_ones(ws: Path) -> None:
    out = hooks_cmd(ws, "run", "nope")
    assert out.returncode == 125
    assert "no hook 'nope' (known: 10-setup, 20-fmt" in out.stderr


def test_a_workspace_that_is_not_there_fails_the_check(tmp_path: Path) -> None:
    """A typo'd --workspace once passed CI as "0 hook(s) valid"."""
    out = subprocess.run([*INITD, "check", "--workspace", str(tmp_path / "typo")],
                         capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert out.returncode == 125
    assert out.stderr.strip() == f"initd: workspace {tmp_path / 'typo'}: no such directory " \
                                 "(--workspace, INITD_WORKSPACE)"


def test_a_file_name_with_a_newline_cannot_forge_a_line(ws: Path) -> None:
    hooks = ws / ".discobot" / "hooks"
    (hooks / "x\nerror: forged").write_text("#!/bin/sh\n#---\n# type: sesion\n#---\n")
    (hooks / "x\nerror: forged").chmod(0o755)
    out = hooks_cmd(ws, "check")
    assert not [line for line in out.stdout.splitlines() if line.startswith("error: forged")]
    assert any("x\\nerror: forged" in line for line in out.stdout.splitlines())
    listed = hooks_cmd(ws, "list")
    assert not [line for line in listed.stdout.splitlines() if line.startswith("error: forged")]


def test_running_a_broken_hook_says_why_it_is_broken(ws: Path) -> None:
    out = hooks_cmd(ws, "run", "30-typo")
    assert out.returncode == 125
    assert out.stderr.startswith("initd: hook '30-typo' is broken: ")
    assert "'sesion'" in out.stderr and len(out.stderr.splitlines()) == 1


def test_list_shows_a_hooks_limits(tmp_path: Path) -> None:
    hooks = tmp_path / ".discobot" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "10-build.sh").write_text("#!/bin/sh\n#---\n# type: session\n"
                                       "# limits: {cpu: 60, memory: 2G, processes: 200}\n"
                                       "#---\nnpm ci\n")
    (hooks / "10-build.sh").chmod(0o755)
    out = hooks_cmd(tmp_path, "list")
    assert out.returncode == 0, out.stderr
    assert "limits=(cpu 60 s, memory 2 GiB, processes 200)" in out.stdout.splitlines()[1]
    [hook] = json.loads(hooks_cmd(tmp_path, "list", "--json").stdout)["hooks"]
    assert hook["limits"] == {"cpu": 60, "memory": 2 * 2**30, "processes": 200,
                              "fileSize": None}


SEVEN = {  # one hook in each format initd reads
    ".iteratr.hooks.yml": "hooks:\n  pre_iteration:\n    - command: echo ctx\n",
    ".nyzhi/config.toml": '[[agent.hooks]]\nevent = "after_edit"\ncommand = "echo {file}"\n',
    ".autoagent/config.json": '{"hooks": {"PreExecutionStart": [{"command": "echo a"}]}}',
    "pipeline.yaml": "hooks:\n  on_session_start:\n    - type: shell\n      command: echo p\n",
    ".claude/settings.json": '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type":'
                             ' "command", "command": "echo c", "if": "Bash(git commit:*)"}]}]}}',
    ".devcontainer/devcontainer.json": '{ // JSONC\n  "postCreateCommand": "npm ci",\n}\n',
}


def test_list_shows_all_seven_formats(ws: Path, tmp_path: Path) -> None:
    add_hook(ws / ".discobot" / "hooks", "10-hi.sh", "echo hi", type="session")
    for name, text in SEVEN.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    home = tmp_path / "home"  # (no ~/.claude, ~/.autoagent of the real HOME's)
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    table = subprocess.run([*INITD, "list", "--workspace", str(ws), "--hooks-dir",
                            str(ws / "no-image")], capture_output=True, text=True,
                           timeout=60, env=env)
    assert table.returncode == 0, table.stderr
    rows = {tuple(line.split()[:2]) for line in table.stdout.splitlines() if line.strip()}
    assert {("10-hi", "session"), ("pre_iteration", "iteratr"), ("after_edit", "nyzhi"),
            ("pre_execution_start", "autoagent"), ("session_start", "pipelines"),
            ("pre_tool", "claude"), ("devcontainer", "postCreateCommand")} <= rows
    assert "matcher='Bash' if='Bash(git commit:*)'" in table.stdout
    listed = json.loads(subprocess.run(
        [*INITD, "list", "--json", "--workspace", str(ws), "--hooks-dir",
         str(ws / "no-image")], capture_output=True, text=True, timeout=60, env=env).stdout)
    assert "10-hi" in [h["id"] for h in listed["hooks"]]  # (with the fixture's own)
    assert sorted({e["dialect"] for e in listed["events"]}) == [
        "autoagent", "claude", "iteratr", "nyzhi", "pipelines"]
    assert [c["stage"] for c in listed["devcontainer"]["commands"]] == ["postCreateCommand"]
    assert listed["problems"] == []


# --- the verb in this process (initd/commands/hooks.py)


def test_check_counts_every_error_and_a_hooks_directory_holds_hooks_only(
        ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / ".nyzhi").mkdir()  # (the fixture's README.md and 30-typo.sh: two errors more)
    (ws / ".nyzhi" / "config.toml").write_text('[[agent.hooks]]\nevent = "pre_tol"\n'
                                               'command = "x"\n')
    code = hooks.main(["check", "--workspace", str(ws), "--hooks-dir", str(ws / "none")])
    out = capsys.readouterr().out
    assert code == 1 and "(it will not run: a hooks directory holds hooks only)" in out
    assert "unknown event 'pre_tol'" in out and out.rstrip().endswith("3 error(s)")


def test_a_workspace_that_is_not_there_is_an_error_not_zero_hooks(tmp_path: Path) -> None:
    with pytest.raises(InitdError, match="no such directory"):
        hooks.main(["check", "--workspace", str(tmp_path / "typo")])
