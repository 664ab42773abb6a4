"""process/spec.py: what a child is started with. Its environment (the base, the user's
login variables, the extras, minus the secrets), and what a Spec's defaults and stdio
names mean once spawn.py turns one into a real process."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from initd.process import spawn, users
from initd.process.spec import DEVNULL, HOOK_ENV, INHERIT, PIPE, STDOUT, Spec, environment


def started(spec: Spec) -> tuple[int, bytes]:
    """(exit code, stdout) of ``spec`` run to its end, its stdout a pipe."""
    child = spawn.spawn(spec._replace(stdout=PIPE))
    assert child.popen.stdout is not None
    out = child.popen.stdout.read()
    child.popen.stdout.close()
    code = child.wait(60)
    assert code is not None
    return code, out


def sh(script: str, **fields: object) -> Spec:
    return Spec(argv=("sh", "-c", script), env={"PATH": "/usr/bin:/bin"}, cwd="/",
                **fields)  # type: ignore[arg-type]


# --- environment


def test_the_base_is_copied_and_never_changed() -> None:
    base = {"PATH": "/bin", "TERM": "xterm"}
    env = environment(base, None)
    assert env == base and env is not base
    env["X"] = "1"
    assert base == {"PATH": "/bin", "TERM": "xterm"}


def test_the_users_login_variables_replace_the_bases() -> None:
    root = users.lookup("root")
    env = environment({"HOME": "/home/someone", "USER": "someone", "PATH": "/bin"}, root)
    assert env == {"HOME": root.home, "USER": "root", "LOGNAME": "root",
                   "SHELL": root.shell, "PATH": "/bin"}


def test_a_user_without_a_shell_gets_sh() -> None:
    nobody = users.lookup("root")._replace(shell="")
    assert environment({}, nobody)["SHELL"] == "/bin/sh"


def test_the_extras_come_last_and_win() -> None:
    root = users.lookup("root")
    env = environment({"A": "base", "HOME": "/x"}, root, extra={"A": "extra", "HOME": "/y"})
    assert (env["A"], env["HOME"]) == ("extra", "/y")


def test_removed_names_are_gone_wherever_they_came_from() -> None:
    root = users.lookup("root")
    env = environment({"TOKEN": "b", "KEEP": "1"}, root, extra={"SECRET": "e"},
                      remove=("TOKEN", "SECRET", "USER", "NOT_THERE"))
    assert "TOKEN" not in env and "SECRET" not in env and "USER" not in env
    assert env["KEEP"] == "1" and env["HOME"] == root.home


def test_a_child_as_the_agent_gets_its_login_environment_and_no_secret(
        agent_user: pwd.struct_passwd, tmp_path: Path) -> None:
    account = users.lookup(agent_user.pw_name)
    env = environment({"PATH": "/usr/bin:/bin", "HOME": "/root", "API_TOKEN": "s3cret"},
                      account, extra={"DISCOBOT_WORKSPACE": str(tmp_path)},
                      remove=("API_TOKEN",))
    code, out = started(Spec(argv=("env",), env=env, cwd="/", account=account))
    assert code == 0
    seen = dict(line.split("=", 1) for line in out.decode().splitlines())
    assert seen == {"PATH": "/usr/bin:/bin", "HOME": agent_user.pw_dir,
                    "USER": agent_user.pw_name, "LOGNAME": agent_user.pw_name,
                    "SHELL": agent_user.pw_shell, "DISCOBOT_WORKSPACE": str(tmp_path)}


# --- a Spec's defaults, in a real child


def test_by_default_stdin_is_dev_null_and_the_group_its_own() -> None:
    code, out = started(sh('readlink /proc/self/fd/0; cat; ps -o pgid= -o sid= -p $$'))
    assert code == 0
    stdin, *rest = out.decode().splitlines()
    pgid, sid = (int(n) for n in rest[0].split())
    assert stdin == "/dev/null"
    assert sid == os.getsid(0) and pgid != os.getpgid(0)  # a group, not a session


def test_new_session_makes_it_the_leader_of_a_process_session() -> None:
    code, out = started(sh('echo $$; ps -o pgid= -o sid= -p $$', new_session=True))
    assert code == 0
    pid, ids = out.decode().splitlines()
    assert [int(n) for n in ids.split()] == [int(pid), int(pid)]


def test_inherit_is_our_own_stdout(capfd: pytest.CaptureFixture[str]) -> None:
    assert INHERIT is None
    child = spawn.spawn(sh("echo inherited"))
    assert child.wait(60) == 0
    assert capfd.readouterr().out == "inherited\n"


def test_stdout_for_stderr_is_the_same_pipe_in_arrival_order() -> None:
    code, out = started(sh("echo 1; echo 2 >&2; echo 3; echo 4 >&2", stderr=STDOUT))
    assert (code, out) == (0, b"1\n2\n3\n4\n")


def test_devnull_and_a_pipe_for_stdin() -> None:
    assert started(sh("cat", stdin=DEVNULL)) == (0, b"")
    child = spawn.spawn(sh("cat", stdin=PIPE, stdout=PIPE))
    assert child.popen.stdin is not None and child.popen.stdout is not None
    child.popen.stdin.write(b"fed\n")
    child.popen.stdin.close()
    assert child.popen.stdout.read() == b"fed\n"
    child.popen.stdout.close()
    assert child.wait(60) == 0


def test_pass_fds_are_kept_at_their_numbers_and_nothing_else_is() -> None:
    read, write = os.pipe()
    other, dropped = os.pipe()
    os.set_inheritable(write, True)
    os.set_inheritable(dropped, True)  # inheritable, but not named: closed all the same
    script = ("import os, sys; write, dropped = map(int, sys.argv[1:]); "
              "os.write(write, b'via %d' % write); "
              "print(os.path.exists(f'/proc/self/fd/{dropped}'))")
    try:
        code, out = started(Spec(argv=(sys.executable, "-c", script, str(write), str(dropped)),
                                 env={}, cwd="/", pass_fds=(write,)))
        os.close(write)
        assert (code, out) == (0, b"False\n")
        assert os.read(read, 100) == f"via {write}".encode()
    finally:
        for fd in (read, other, dropped):
            os.close(fd)


def test_hook_env_keeps_a_python_hook_from_importing_the_workspaces_modules(
        tmp_path: Path) -> None:
    """A root session hook's ``python3 -c 'import json'`` in the workspace (its cwd)
    would import a json.py the agent left there; with HOOK_ENV it never does."""
    (tmp_path / "json.py").write_text("print('the workspace ran as', __import__('os').getuid())\n")
    argv = (sys.executable, "-c", "import json; print(json.__file__)")
    plain = Spec(argv=argv, env={}, cwd=str(tmp_path))
    code, out = started(plain)
    assert out.startswith(b"the workspace ran as")  # (the danger is real)
    code, out = started(plain._replace(env=dict(HOOK_ENV)))
    assert code == 0 and out.decode().strip() == subprocess.run(
        [sys.executable, "-I", "-c", "import json; print(json.__file__)"],
        capture_output=True, text=True, check=True).stdout.strip()
