"""Red-team attempts against initd's root boundary (invariants 1, 8 and 11), made as the
agent user: a real user, a workspace it owns, initd booted as PID 1 with ``--user``; each
outcome proven with root-owned canaries (tests/support/attack.py).

An attack that worked when this round was made is marked ``# Once worked: …`` on the line
above its test (each failed on the code before its fix); one that was stopped pins the
defence. Deadlines are on events (a line, an exit), set far from both outcomes. The
supervisor, the stop, the channel and the probes are in test_redteam_stop.py; the guards
(invariant 12) in test_redteam_guards.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.attack import Agent, Canary, agent_script, as_agent, hook
from tests.support.redteam import HOOKS, records


@pytest.fixture
def record() -> Iterator[Path]:
    yield from records()


# --------------------------------------------------------------------------------------
# Invariant 11: what a workspace's root session hook leaves running as root is stopped
# before the agent starts. The watcher below waits for the agent's request (a file in
# the workspace) and then copies root's secret where the agent reads it.

WAIT_FOR_LEAK = """
    import os, sys, time
    ws = sys.argv[1]
    open(os.path.join(ws, "please"), "w").close()
    deadline = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < deadline and not os.path.exists(os.path.join(ws, "leak")):
        time.sleep(0.05)
    print("leak" if os.path.exists(os.path.join(ws, "leak")) else "no leak", flush=True)
"""
WATCH = 'while :; do [ -e "{ws}/please" ] && cat {secret} > "{ws}/leak"; sleep 0.05; done'

# A root daemon that keeps hopping to a new pid (fork, the parent exits) faster than
# the sweep can scan /proc and signal what it saw, for longer than the sweep's rounds
# last; then it settles and watches.
FORK_HOPPER = r"""
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    if os.fork():
        os._exit(0)
os.execvp("sh", ["sh", "-c", sys.argv[2]])
"""
FORK_HOPPER_C = r"""
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    struct timespec start, now;
    double secs = atof(argv[1]);
    signal(SIGTERM, SIG_IGN);
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 > secs)
            break;
        if (fork() > 0)
            _exit(0);
    }
    execl("/bin/sh", "sh", "-c", argv[2], (char *)0);
    return 127;
}
"""



# Once worked (the [c] case, about 5 runs in 6): the sweep listed /proc, then read each
# pid; a hopper forked and exited in between, a scan came up empty, and the sweep ended
# saying "stopped" while the hopper lived on. Now a hopper no freeze catches is caught
# by stopping the whole PID namespace at once (initd/process/rootleftovers.py).
@pytest.mark.slow
@pytest.mark.parametrize("language", ["python", "c"])
def test_a_fork_hopping_root_daemon_outlives_the_leftover_sweep(
        boot, agent: Agent, ws: Path, canary: Canary, record: Path, language: str) -> None:
    """The image may ship any binary a root hook runs: a compiled hopper is ~20x faster
    than Python's fork."""
    os.chmod(record, 0o755)
    if language == "python":
        (record / "hop.py").write_text(FORK_HOPPER)
        command = f"/usr/bin/python3 {record / 'hop.py'}"
    else:
        if shutil.which("gcc") is None:
            pytest.fail("this attack needs gcc on the test host")
        (record / "hop.c").write_text(FORK_HOPPER_C)
        subprocess.run(["gcc", "-O2", "-o", str(record / "hop"), str(record / "hop.c")],
                       check=True)
        command = str(record / "hop")
    watch = WATCH.format(ws=ws, secret=canary.secret)
    body = (f"setsid {command} 8 '{watch}' </dev/null >/dev/null 2>&1 &\n"
            "sleep 0.2")
    hook(ws / Path(*HOOKS), "10-root.sh", body, owner=agent, type="session",
         run_as="root")
    # the hopper hops for 8 s, then watches: a hopper the sweep missed leaks within a
    # tenth of a second of that, well inside the agent's 12 s
    init = boot(sys.executable, agent_script(WAIT_FOR_LEAK), str(ws), "12",
                more=("--grace", "1"))
    assert init.wait(timeout=90) == 0, init.stderr[-3000:]
    assert init.stdout_lines[-1] == "no leak", init.stderr[-3000:]
    assert canary.leaked_into(ws) == []


# Once worked: a root hook's daemon with the agent's uids and root's capabilities was
# not stopped (only uid 0 counted; now any capability does)
@pytest.mark.slow
def test_a_root_daemon_that_keeps_its_capabilities_under_the_agents_uid_is_stopped(
        boot, agent: Agent, ws: Path, canary: Canary) -> None:
    """It "drops to another user" by its uids only: with keep-caps and ambient
    capabilities it is the agent's uid with root's powers (CAP_DAC_OVERRIDE)."""
    watch = WATCH.format(ws=ws, secret=canary.secret)
    body = (f"setsid capsh --keep=1 --user={agent.name} --inh=cap_dac_override,cap_setuid "
            f"--addamb=cap_dac_override,cap_setuid -- -c '{watch}' "
            "</dev/null >/dev/null 2>&1 &\nsleep 0.2")
    hook(ws / Path(*HOOKS), "10-root.sh", body, owner=agent, type="session",
         run_as="root")
    init = boot(sys.executable, agent_script(WAIT_FOR_LEAK), str(ws), "10",
                more=("--grace", "1"))
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    assert init.stdout_lines[-1] == "no leak", init.stderr[-3000:]
    assert canary.leaked_into(ws) == []

# --------------------------------------------------------------------------------------
# `initd hooks run ID` run by a person as root, under --trust: root checks the file's
# hash, then executes the file by its path. The agent swaps the file between the two.

SWAPPER = """
    import os, sys, time
    path, good, evil, end = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    deadline = time.monotonic() + end
    while time.monotonic() < deadline:
        for src in (good, evil):
            try:
                os.link(src, path + ".swap")
                os.replace(path + ".swap", path)
            except OSError:
                pass
"""


# Once worked: `initd hooks run` as root under --trust hashed the file, then exec'd it by
# path; now it runs a copy (the hook's $0 shows it: deterministic, whatever the race does)
@pytest.mark.slow
@pytest.mark.timeout(300)  # (40 runs beside a swapper: past 60 s with three suites on a host)
def test_root_running_a_trusted_hook_runs_only_the_approved_bytes(
        agent: Agent, ws: Path, record: Path, image: str, sid: str) -> None:
    hooks = ws / Path(*HOOKS)
    good = hook(hooks, "10-root.sh", f'echo "original $(id -u) $0" >> {record}/ran',
                owner=agent, type="session", run_as="root")
    store = record / "store" / "trust.json"
    out = subprocess.run([sys.executable, "-m", "initd", "hooks", "trust", "--workspace",
                          str(ws), "--hooks-dir", image, "--user", agent.name,
                          "--trust-file", str(store)], capture_output=True, text=True,
                         timeout=60, cwd="/")
    assert out.returncode == 0, out.stderr
    keep = Path(agent.home) / "good.sh"
    evil = Path(agent.home) / "evil.sh"
    as_agent(agent, f"cp -p {good} {keep}")
    evil.write_text(good.read_text().replace("original", "evil"))
    os.chown(evil, agent.uid, agent.gid)
    evil.chmod(0o755)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("INITD_")},
           "INITD_TRUST": "1", "INITD_TRUST_FILE": str(store)}
    run = [sys.executable, "-m", "initd", "hooks", "run", "10-root", "--workspace", str(ws),
           "--hooks-dir", image, "--user", agent.name, "--session-id", sid]

    def ran() -> str:
        return (record / "ran").read_text() if (record / "ran").exists() else ""

    # without --trust, root runs none of the workspace's root hooks once there is an agent
    untrusted = {k: v for k, v in env.items() if k != "INITD_TRUST"}
    no = subprocess.run(run, capture_output=True, text=True, timeout=60, env=untrusted,
                        cwd="/")
    assert no.returncode == 125 and "root runs it only at boot" in no.stderr, no.stderr
    assert ran() == ""
    # without a race, --trust holds: the approved bytes run, from root's copy (its $0),
    # and the changed ones do not
    assert subprocess.run(run, capture_output=True, timeout=60, env=env, cwd="/").returncode == 0
    first = ran().split()
    assert first[:2] == ["original", "0"] and "/initd-root-hooks." in first[2], first
    as_agent(agent, f"cp -p {evil} {good}")
    refused = subprocess.run(run, capture_output=True, text=True, timeout=60, env=env, cwd="/")
    assert refused.returncode != 0 and ran().count("\n") == 1, refused.stderr
    as_agent(agent, f"cp -p {keep} {good}")
    swap = subprocess.Popen(
        ["runuser", "-u", agent.name, "--", sys.executable, agent_script(SWAPPER), str(good),
         str(keep), str(evil), "60"], cwd="/")
    try:
        for _ in range(40):
            subprocess.run(run, capture_output=True, timeout=60, env=env, cwd="/")
            if "evil" in ran():
                break
    finally:
        swap.kill()
        swap.wait()
    assert "evil" not in ran(), ran()

# --------------------------------------------------------------------------------------
# Invariant 8: a root session hook runs with root's HOME, never the agent's (a home on a
# volume keeps what the last agent wrote there: Python's user site, a ~/.gitconfig).

def test_a_root_session_hook_never_loads_the_agents_dotfiles(
        boot, agent: Agent, ws: Path, canary: Canary) -> None:
    owned = canary.dir / "owned"
    site = Path(agent.home, ".local", "lib",
                f"python{sys.version_info.major}.{sys.version_info.minor}", "site-packages")
    as_agent(agent, f"mkdir -p {site} && printf '%s\\n' "
                    f"\"import os; open({str(owned)!r}, 'w').write(str(os.getuid()))\" "
                    f"> {site}/zz-agent.pth")
    as_agent(agent, f"git config --global core.pager 'touch {canary.dir}/pager' && "
                    f"git config --global alias.st '!touch {canary.dir}/alias'")
    body = ("/usr/bin/python3 -c pass; python3 -c pass; "
            f"cd {ws} && git -c core.fsmonitor=false st >/dev/null 2>&1; "
            "git --paginate log -1 >/dev/null 2>&1; echo done")
    hook(ws / Path(*HOOKS), "10-root.sh", body, owner=agent, type="session", run_as="root")
    init = boot("true")
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    assert not owned.exists()
    assert [p.name for p in canary.dir.iterdir()
            if p.name in ("pager", "alias", "owned")] == []

# --------------------------------------------------------------------------------------
# Invariant 11: root session hooks run once, before the agent's first instruction; a
# restart of the agent (--restart on-failure) must not run them again, on a workspace
# the agent has since rewritten.

@pytest.mark.slow
def test_a_restarted_agent_never_runs_the_root_session_hooks_again(
        boot, agent: Agent, ws: Path, record: Path) -> None:
    hook(ws / Path(*HOOKS), "10-root.sh", f'echo "root $(id -u)" >> {record}/ran',
         owner=agent, type="session", run_as="root")
    flag = ws / "second"
    init = boot("sh", "-c", f"if [ -e {flag} ]; then exit 0; fi; touch {flag}; exit 3",
                more=("--restart", "on-failure"))
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    assert (record / "ran").read_text().splitlines() == ["root 0"]

# --------------------------------------------------------------------------------------
# The chain: `.git/commondir` in the agent's own git dir names a repository of root's
# (readable by all, as in an image). git run as the agent then reports root's directory
# as the common dir, and `--git-path hooks` inside it; the repository's "owner" becomes
# root. Planted before boot (a workspace on a volume); then asked again over the
# channel mid-session.

COMMON_OP = """
    import json, sys
    import os, signal
    from tests.support.agent_side import channel_of, service_pid, stop
    service = service_pid()
    channel = channel_of(service)
    stop(service)  # (every thread of it stopped: the reply comes to us, not to it)
    channel.settimeout(60)
    channel.sendall(b'{"op": "precommit", "id": 7}\\n')
    got = b""
    while b'"reply"' not in got:
        chunk = channel.recv(65536)
        if not chunk:
            break
        got += chunk
    print(json.dumps(got.decode(errors="replace")[-500:]), flush=True)
    os.kill(service, signal.SIGCONT)
"""


def test_a_commondir_naming_roots_repository_gets_no_root_write(
        boot, agent: Agent, ws: Path) -> None:
    canary = Canary()
    try:
        repo = canary.sub / "repo.git"
        subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
        subprocess.run(["chmod", "-R", "go+rX", str(canary.dir)], check=True)
        canary.before = canary._state()
        as_agent(agent, f"echo {repo} > {ws}/.git/commondir")
        hook(ws / Path(*HOOKS), "10-pc.sh", "true", owner=agent, type="pre-commit")
        init = boot(sys.executable, agent_script(COMMON_OP))
        assert init.wait(timeout=60) == 0, init.stderr[-3000:]
        assert canary.changes() == []
    finally:
        canary.remove()

# --------------------------------------------------------------------------------------
# devcontainer.json: an object command's name becomes part of the log root writes for
# it. Names that climb out of the output directory, or are links the agent made there.

def test_a_devcontainer_command_name_never_leads_roots_log_elsewhere(
        boot, agent: Agent, ws: Path, sid: str, canary: Canary) -> None:
    names = [f"/../../../../../../..{canary.sub}/pwn", "../../../../x", "..", ".", "a/b",
             "\n\x1b[2J", "x" * 5000]
    data = {"postStartCommand": {name: "echo hi" for name in names},
            "waitFor": "postStartCommand"}
    as_agent(agent, f"cat > {ws}/.devcontainer.json <<'EOF'\n{json.dumps(data)}\nEOF")
    out = agent.state / sid / "hooks" / "output"
    as_agent(agent, f"mkdir -p {out} && ln -s {canary.sub} {out}/devcontainer-poststartcommand-")
    init = boot("true")
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    assert canary.changes() == []
    logs = [p.name for p in out.iterdir() if p.name.startswith("devcontainer-")]
    assert all("/" not in name and len(name) < 256 for name in logs), logs


@pytest.mark.parametrize("planted", ["deep", "fifo", "huge", "hardlink-dir"])
def test_a_hostile_lifecycle_marker_costs_boot_nothing(
        boot, agent: Agent, ws: Path, planted: str) -> None:
    markers = agent.state / "devcontainer"
    shutil.rmtree(markers, ignore_errors=True)
    as_agent(agent, f"mkdir -p {markers}")
    path = markers / "lifecycle.json"
    key = str(ws / ".devcontainer.json")
    if planted == "deep":  # loads fine at the top of the stack, deeper than json.dumps goes?
        depth = 950
        text = '{"version": 1, "configs": {' + json.dumps(key) + ': {"container": "x", ' \
            '"done": {}, "deep": ' + "[" * depth + "]" * depth + "}}}"
        as_agent(agent, f"cat > {path} <<'EOF'\n{text}\nEOF")
    elif planted == "fifo":
        as_agent(agent, f"mkfifo {path}")
    elif planted == "huge":
        as_agent(agent, f"truncate -s 3G {path}")
    else:
        as_agent(agent, f"mkdir {path}")
    (ws / ".devcontainer.json").write_text(json.dumps(
        {"onCreateCommand": f"echo ran >> {ws}/ran", "postStartCommand": "true"}))
    init = boot("echo", "agent ran")
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    shutil.rmtree(markers, ignore_errors=True)
    assert init.stdout_lines == ["agent ran"]
    assert (ws / "ran").read_text() == "ran\n"
    assert "Traceback" not in init.stderr

# --------------------------------------------------------------------------------------
# Invariant 4: the chain's script names each pre-commit hook. Whoever commits runs it
# (an operator as root too): a hook's name, description and file name are data.

def test_a_pre_commit_hooks_name_is_never_shell_code_in_the_chain(
        boot, agent: Agent, ws: Path, canary: Canary) -> None:
    pwned = ws / "pwned"
    hooks = ws / Path(*HOOKS)
    names = [f"$(touch {pwned})", f"`touch {pwned}`", f"x'; touch {pwned}; '",
             f"x\ntouch {pwned}\n", f'x" ; touch {pwned} ; "']
    for n, name in enumerate(names):
        hook(hooks, f"{n:02d}-pc.sh", "true", owner=agent, type="pre-commit", name=name)
    odd = hooks / f"50-$(touch {pwned.name})'x.sh"
    hook(hooks, odd.name, "true", owner=agent, type="pre-commit")
    init = boot("true")
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    chain = (ws / ".git" / "hooks" / "pre-commit").read_text()
    assert subprocess.run(["sh", "-n", "-c", chain]).returncode == 0
    out = subprocess.run(["git", "-C", str(ws), "-c", f"safe.directory={ws}", "commit",
                          "--allow-empty", "-qm", "x"], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "GIT_AUTHOR_NAME": "r",
                                          "GIT_AUTHOR_EMAIL": "r@x", "GIT_COMMITTER_NAME": "r",
                                          "GIT_COMMITTER_EMAIL": "r@x"})
    assert out.returncode == 0, out.stderr
    assert not pwned.exists()
    assert canary.changes() == []


def test_root_listing_hooks_shows_no_terminal_escape(agent: Agent, ws: Path,
                                                     image: str) -> None:
    hooks = ws / Path(*HOOKS)
    hook(hooks, "10-x.sh", "true", owner=agent, type="session",
         name="\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J", description="\x1b[31mred")
    (hooks / "20-\x1b[2Jbad.sh").write_text("#!/bin/sh\n#---\ntype: nope\n#---\n")
    os.chown(hooks / "20-\x1b[2Jbad.sh", agent.uid, agent.gid)
    for verb in (["list"], ["list", "--json"], ["check"]):
        out = subprocess.run([sys.executable, "-m", "initd", "hooks", *verb, "--workspace",
                              str(ws), "--hooks-dir", image, "--user", agent.name],
                             capture_output=True, text=True, timeout=60, cwd="/")
        assert "\x1b" not in out.stdout + out.stderr, verb


def test_root_listing_a_deeply_nested_session_record_is_no_traceback(agent: Agent) -> None:
    sessions = agent.state / "sessions"
    name = f"deep-{os.urandom(4).hex()}"
    as_agent(agent, f"mkdir -p {sessions} && python3 -c 'import sys; "
                    f"sys.stdout.write(\"[\" * 100000 + \"]\" * 100000)' > {sessions}/{name}.json"
                    f" && python3 -c 'import sys; sys.stdout.write(\"{{\\\"id\\\": \\\"x\\\", "
                    f"\\\"issues\\\": \" + \"[\" * 100000 + \"]\" * 100000 + \"}}\")' "
                    f"> {sessions}/{name}-2.json")
    try:
        out = subprocess.run([sys.executable, "-m", "initd", "sessions", "--user", agent.name,
                              "--json"], capture_output=True, text=True, timeout=60, cwd="/")
        assert "Traceback" not in out.stderr, out.stderr[-2000:]
        assert out.returncode == 0, out.stderr[-2000:]
    finally:
        as_agent(agent, f"rm -f {sessions}/{name}.json {sessions}/{name}-2.json")

# --------------------------------------------------------------------------------------
# An operator, as root, runs `initd precommit install|uninstall` in the agent's
# repository without --user: git then runs as whom, with whose config?

def test_root_installing_the_chain_runs_none_of_the_agents_git_config(
        agent: Agent, ws: Path, canary: Canary, image: str) -> None:
    touch = f"touch {canary.dir}/ran-"
    for key, value in (("core.fsmonitor", f"{touch}fsmonitor"), ("core.pager", f"{touch}pager"),
                       ("core.sshCommand", f"{touch}ssh"), ("alias.rev-parse", f"!{touch}alias"),
                       ("core.hooksPath", ".git/hooks"), ("diff.external", f"{touch}diff")):
        as_agent(agent, f"git -C {ws} config {key} '{value}'")
    hook(ws / Path(*HOOKS), "10-pc.sh", "true", owner=agent, type="pre-commit")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "INITD_"))}
    for verb in ("install", "uninstall", "install"):
        out = subprocess.run([sys.executable, "-m", "initd", "precommit", verb, "--workspace",
                              str(ws), "--hooks-dir", image], capture_output=True, text=True,
                             timeout=60, env=env, cwd="/")
        assert out.returncode in (0, 125), out.stderr
    assert canary.changes() == []

# --------------------------------------------------------------------------------------
# --state-dir names ~/.discobot itself (the default's own place, named: a volume's mount
# point in one container, a plain directory in the next). The base of a named state dir
# is "trusted as named", so opened following links: the agent's home is the agent's.

# Once worked: a --state-dir in the agent's home is opened through the agent's link
def test_a_state_dir_named_inside_the_agents_home_follows_no_link(
        boot, agent: Agent, ws: Path, sid: str, canary: Canary) -> None:
    hook(ws / Path(*HOOKS), "10-user.sh", "echo hi", owner=agent, type="session")
    (ws / ".devcontainer.json").write_text(json.dumps({"onCreateCommand": "true"}))
    named = Path(agent.home) / ".discobot-state"
    as_agent(agent, f"ln -s {canary.sub} {named}")
    try:
        init = boot("true", more=("--state-dir", str(named)))
        assert init.wait(timeout=60) == 0, init.stderr[-3000:]
        assert canary.changes() == []
    finally:
        os.unlink(named)


# The workspace itself inside the agent's home (~/project: a common layout), swapped by
# the agent (a home on a volume: before boot) for a link to a repository of root's.

def test_a_workspace_in_the_agents_home_swapped_for_a_link_gets_no_root_write(
        boot, agent: Agent, image: str, sid: str) -> None:
    canary = Canary()
    project = Path(agent.home) / f"project-{os.urandom(3).hex()}"
    try:
        repo = canary.sub / "app"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        (repo / ".discobot" / "hooks").mkdir(parents=True)
        subprocess.run(["chmod", "-R", "go+rX", str(canary.dir)], check=True)
        canary.before = canary._state()
        as_agent(agent, f"ln -s {repo} {project}")
        init = boot("true", more=("--workspace", str(project)))
        init.wait(timeout=60)
        assert canary.changes() == [], init.stderr[-2000:]
    finally:
        if project.is_symlink():
            project.unlink()
        canary.remove()


# A root session hook that leaves no process, only a file: a setuid-root copy of a
# program, which the agent runs after its first instruction (file capabilities alike).

READ_WITH = """
    import subprocess, sys
    out = subprocess.run([sys.argv[1], sys.argv[2]], capture_output=True, text=True)
    open(sys.argv[3], "w").write(out.stdout)
    print("tried", flush=True)
"""


def no_new_privileges() -> None:
    """prctl(PR_SET_NO_NEW_PRIVS, 1): what Kubernetes' allowPrivilegeEscalation: false
    and podman's --security-opt no-new-privileges give the container's first process."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")


# A root session hook is root: a setuid file (or a sudoers line) it leaves is the
# workspace's choice, which --trust exists to approve. What the README tells operators
# to deploy with (no new privileges for the container) makes such a file inert for the
# agent; this pins that initd runs whole under it, and that the file gives nothing.
def test_a_setuid_file_a_root_hook_left_gives_the_agent_nothing(
        boot, agent: Agent, ws: Path, canary: Canary, record: Path) -> None:
    os.chmod(record, 0o755)
    body = f"cp /bin/cat {record}/rcat && chmod 4755 {record}/rcat"
    hook(ws / Path(*HOOKS), "10-root.sh", body, owner=agent, type="session", run_as="root")
    init = boot(sys.executable, agent_script(READ_WITH), str(record / "rcat"),
                str(canary.secret), str(ws / "leak"), preexec_fn=no_new_privileges)
    assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    assert init.stdout_lines[-1] == "tried"
    assert (record / "rcat").stat().st_mode & 0o4000  # the root hook ran: it is there
    assert canary.leaked_into(ws) == []
