"""Invariant 3: the agent runs as the agent user, fully: uid, gid, groups, login variables."""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys

import pytest

from initd.errors import InitdError
from initd.process import users
from tests.support.harness import run, wait_for

PROBE = ('id -u; id -g; id -G; echo "home=$HOME user=$USER logname=$LOGNAME shell=$SHELL"; '
         'if echo x >> "$1" 2>/dev/null; then echo write=ok; else echo write=denied; fi')


@pytest.fixture
def root_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("rootonly") / "owned-by-root"
    path.write_text("root's\n")
    os.chmod(path, 0o644)
    os.chmod(path.parent, 0o755)
    return str(path)


def drop_root_groups_into_parent() -> None:
    """initd's own parent runs with root supplementary groups: none may reach the agent."""
    os.setgroups([0, 27, 4])


@pytest.mark.parametrize("pidns", [True, False], ids=["pid1", "subreaper"])
def test_agent_runs_as_user_with_exactly_its_groups(agent_user: pwd.struct_passwd,
                                                    agent_groups: set[int], root_file: str,
                                                    pidns: bool) -> None:
    env = {**os.environ, "HOME": "/root", "USER": "root", "LOGNAME": "root"}
    init = run(["--user", agent_user.pw_name, "--", "sh", "-c", PROBE, "probe", root_file],
               pidns=pidns, env=env, preexec_fn=drop_root_groups_into_parent)
    assert init.code == 0, init.stderr
    uid, gid, groups, login, write = init.stdout_lines
    assert int(uid) == agent_user.pw_uid
    assert int(gid) == agent_user.pw_gid
    assert {int(g) for g in groups.split()} == agent_groups
    assert 0 not in {int(g) for g in groups.split()}
    assert login == (f"home={agent_user.pw_dir} user={agent_user.pw_name} "
                     f"logname={agent_user.pw_name} shell={agent_user.pw_shell}")
    assert write == "write=denied"
    with open(root_file) as f:
        assert f.read() == "root's\n"


def test_without_user_agent_runs_as_invoker(root_file: str) -> None:
    init = run(["--", "sh", "-c", PROBE, "probe", root_file])
    assert init.stdout_lines[0] == str(os.getuid())
    assert init.stdout_lines[-1] == "write=ok"


def test_user_from_agent_user_alias(agent_user: pwd.struct_passwd) -> None:
    env = {**os.environ, "AGENT_USER": agent_user.pw_name}
    init = run(["--", "id", "-un"], env=env)
    assert init.stdout_lines == [agent_user.pw_name], init.stderr


def test_numeric_uid_resolves_through_passwd(agent_user: pwd.struct_passwd) -> None:
    init = run(["--user", str(agent_user.pw_uid), "--", "sh", "-c", 'echo "$USER $HOME"'])
    assert init.stdout_lines == [f"{agent_user.pw_name} {agent_user.pw_dir}"], init.stderr


def test_unknown_user_is_125_with_clear_message() -> None:
    init = run(["--user", "no-such-user-xyz", "--", "true"])
    assert init.code == 125
    assert "unknown user 'no-such-user-xyz'" in init.stderr
    assert init.stderr.count("\n") == 1  # one line that says what to fix


def test_user_signal_forwarding_still_works(initd, agent_user: pwd.struct_passwd) -> None:
    # A dropped agent in its own group still gets signals from root's supervisor.
    init = initd(["--user", agent_user.pw_name, "--", "sleep", "100"])
    sleeps = wait_for(lambda: [p for p in init.descendants() if p.name() == "sleep"],
                      what="the agent's sleep")
    assert sleeps[0].uids().real == agent_user.pw_uid  # type: ignore[index]
    init.signal(signal.SIGTERM)
    assert init.wait() == 128 + signal.SIGTERM


def test_lookup_by_name_or_uid_is_passwds_entry_and_its_groups_exactly() -> None:
    entry = pwd.getpwnam("nobody")
    for spec in ("nobody", str(entry.pw_uid)):
        account = users.lookup(spec)
        assert (account.name, account.uid, account.gid, account.home) == (
            "nobody", entry.pw_uid, entry.pw_gid, entry.pw_dir)
        assert set(account.groups) == set(os.getgrouplist("nobody", entry.pw_gid))
        assert 0 not in account.groups  # (invariant 3: no root group survives)
    assert users.lookup("nobody").env() == {"HOME": entry.pw_dir, "USER": "nobody",
                                            "LOGNAME": "nobody", "SHELL": entry.pw_shell}


def test_an_unknown_user_is_an_error_never_a_guess() -> None:
    for spec in ("no-such-user-initd", "4000000000", "", "../root"):
        with pytest.raises(InitdError, match="unknown user"):
            users.lookup(spec)


def test_the_agent_is_nobody_else_when_not_root() -> None:
    """Not root, initd cannot switch users: the agent is this process's own user, or
    None (run as itself), never an error for an image's INITD_USER."""
    code = ("import os; from initd.process import users; "
            "print(users.agent('root'), users.agent('nobody').name, users.agent('no-such-x'),"
            " users.current().uid == os.geteuid())")
    out = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                          sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": "/"})
    assert out.stdout.split() == ["None", "nobody", "None", "True"]
