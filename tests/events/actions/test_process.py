"""Actions that are processes (initd/events/actions/process.py): ``shell`` with its
placeholders as variable references (a value is never shell code), Claude Code's
``command`` and exec form, a discobot ``script`` the agent changed since the session
began (that guard's error), the built-in git commit and push (argv, no shell), and a
process exec would refuse (E2BIG: the hook's error, fails closed)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from initd.events.actions import Status
from initd.events.actions import process as actions
from initd.events.guardset import take
from initd.events.model import Command, Exec, GitCommit, GitPush, Script, Shell
from initd.events.wire import Origin
from tests.hooks.support import git_ok, git_repo
from tests.support.calls import call

HOSTILE = "$(touch pwned) `touch pwned`; touch pwned' \"; touch pwned #"


def test_a_placeholders_value_is_never_shell_code(tmp_path: Path) -> None:
    made = call(Shell("printf '%s|%s' {{tool_name}} \"${SESSION}\""), workspace=str(tmp_path),
                payload={"tool_name": HOSTILE}, variables={"SESSION": HOSTILE})
    result = actions.shell(made, made.hook.spec)  # type: ignore[arg-type]
    assert result.status == Status.OK and result.stdout == f"{HOSTILE}|{HOSTILE}"
    assert not (tmp_path / "pwned").exists()


def test_an_unknown_placeholder_is_left_as_written_and_said(tmp_path: Path) -> None:
    made = call(Shell("echo {{nope}}"), workspace=str(tmp_path))
    result = actions.shell(made, made.hook.spec)  # type: ignore[arg-type]
    assert result.stdout == "{{nope}}\n" and result.unknown == ("{{nope}}",)


def test_the_hook_reads_the_event_on_stdin_and_runs_in_the_workspace(tmp_path: Path) -> None:
    made = call(Command('cat; printf "|%s|%s" "$PWD" "$CLAUDE_PROJECT_DIR"', "sh"),
                workspace=str(tmp_path), stdin={"tool_name": "Bash"})
    result = actions.command(made, made.hook.spec)  # type: ignore[arg-type]
    said, pwd, project = result.stdout.split("|")
    assert json.loads(said) == {"tool_name": "Bash"} and pwd == project == str(tmp_path)


def test_exec_form_is_an_argument_vector(tmp_path: Path) -> None:
    made = call(Exec("printf", ("%s", HOSTILE)), workspace=str(tmp_path))
    assert actions.command(made, made.hook.spec).stdout == HOSTILE  # type: ignore[arg-type]
    assert not (tmp_path / "pwned").exists()


def test_the_agents_own_hook_environment_for_its_own_formats_hooks_alone(
        tmp_path: Path) -> None:
    origin = Origin("claude", "SessionStart", {}, env=(("CLAUDE_ENV_FILE", "/env"),))
    mine = call(Command('printf "%s" "$CLAUDE_ENV_FILE"', "sh"), origin=origin,
                hook_fields={"dialect": "claude"}, workspace=str(tmp_path))
    theirs = mine._replace(hook=mine.hook._replace(dialect="gemini"))
    assert actions.command(mine, mine.hook.spec).stdout == "/env"  # type: ignore[arg-type]
    assert actions.command(theirs, theirs.hook.spec).stdout == ""  # type: ignore[arg-type]


def test_what_exec_would_refuse_is_the_hooks_error_and_fails_closed(tmp_path: Path) -> None:
    made = call(Shell("echo {{content}}"), workspace=str(tmp_path),
                payload={"content": "x" * 200_000})
    result = actions.shell(made, made.hook.spec)  # type: ignore[arg-type]
    assert result.status == Status.ERROR and result.fails_closed
    assert "could not start: its variable INITD_V_1 is over 128 KiB" in str(result.error)


def test_a_timeout_and_an_exec_error(tmp_path: Path) -> None:
    slow = call(Shell("sleep 3600"), hook_fields={"timeout": 0.2}, workspace=str(tmp_path),
                grace=0.1)
    result = actions.shell(slow, slow.hook.spec)  # type: ignore[arg-type]
    assert result.status == Status.ERROR and result.timed_out
    missing = call(Script(str(tmp_path / "none.sh"), "x"), workspace=str(tmp_path))
    result = actions.script(missing, missing.hook.spec)  # type: ignore[arg-type]
    assert result.status == Status.ERROR and "could not start" in str(result.error)


def test_a_script_changed_since_the_session_began_is_that_guards_error(tmp_path: Path
                                                                       ) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    home.mkdir()
    script = ws / ".discobot" / "hooks" / "10-guard.sh"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n#---\n# type: pre_tool\n#---\nexit 0\n")
    script.chmod(0o755)
    guards = take(str(ws), str(home))
    made = call(Script(str(script), "g"), workspace=str(ws), guards=guards)
    assert actions.script(made, made.hook.spec).status == Status.OK  # type: ignore[arg-type]
    script.write_text("#!/bin/sh\n#---\n# type: pre_tool\n#---\nexit 1\n")
    result = actions.script(made, made.hook.spec)  # type: ignore[arg-type]
    assert result.status == Status.ERROR and result.fails_closed
    assert "changed since the session started" in str(result.error)


def test_git_commit_and_push_without_a_shell(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    git_ok(repo, "commit", "-q", "--allow-empty", "-m", "first")
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git_ok(repo, "remote", "add", "origin", str(bare))
    commit = call(GitCommit("done: {{title}}", noVerify=True), workspace=str(repo),
                  payload={"title": HOSTILE})
    nothing = actions.git_commit(commit, commit.hook.spec)  # type: ignore[arg-type]
    assert nothing.status == Status.OK and nothing.stdout == "nothing to commit\n"
    (repo / "a.txt").write_text("a\n")
    assert actions.git_commit(commit, commit.hook.spec).status == Status.OK  # type: ignore[arg-type]
    log = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%s"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert log == f"done: {HOSTILE}" and not (repo / "pwned").exists()
    push = call(GitPush("origin", "current"), workspace=str(repo))
    assert actions.git_push(push, push.hook.spec).status == Status.OK  # type: ignore[arg-type]
    git_ok(repo, "checkout", "-q", "--detach")
    detached = actions.git_push(push, push.hook.spec)  # type: ignore[arg-type]
    assert detached.status != Status.OK and "detached HEAD" in str(detached.error)
