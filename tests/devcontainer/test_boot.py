"""devcontainer.json's lifecycle commands through a real boot: initd as PID 1 of a PID
namespace, the commands as real processes, their order read from a file each appends to
(never from a clock), their results from status.json."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import imports
from tests.support.harness import UNSHARE, Initd, run, wait_for

SESSION = "dc"
# A command that waits (up to 30 s, then fails: never a hang) until ``seq`` has the n-th
# such line (a second boot's agent waits for its own boot's line); WAIT_LINE, the first.
WAIT_NTH_LINE = ("i=0; until [ \"$(grep -cx {line} seq)\" -ge {n} ]; do i=$((i+1)); "
                 "if [ $i -gt 600 ]; then echo gave-up-waiting-for-{line} >> seq; exit 1; fi; "
                 "sleep 0.05; done")
WAIT_LINE = WAIT_NTH_LINE.replace("{n}", "1")


@pytest.fixture
def ws() -> Iterator[Path]:
    """A workspace anyone may enter (a command may run as the test's agent user)."""
    path = Path(tempfile.mkdtemp(prefix="initd-dc-ws-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def state(tmp_path: Path) -> Path:
    path = tmp_path / "state"
    path.mkdir()
    return path


def devcontainer(ws: Path, text: object, name: str = ".devcontainer/devcontainer.json"
                 ) -> Path:
    path = ws / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if isinstance(text, str) else json.dumps(text, indent=2))
    return path


def args(ws: Path, state: Path, *more: str) -> list[str]:
    return ["-v", "--log-format", "json", "--workspace", str(ws), "--state-dir", str(state),
            "--hooks-dir", str(state / "no-image"), "--session-id", SESSION, "--no-service",
            "--grace", "3", *more]


def boot(ws: Path, state: Path, *cmd: str, more: tuple[str, ...] = (), timeout: float = 60,
         **kwargs: Any) -> Initd:
    return run([*args(ws, state, *more), "--", *cmd], timeout=timeout, **kwargs)


def seq(ws: Path) -> list[str]:
    path = ws / "seq"
    return path.read_text().splitlines() if path.exists() else []


def status(state: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((state / SESSION / "hooks" / "status.json").read_text())
    return data["hooks"]


def logged(init: Initd) -> list[dict[str, Any]]:
    return [json.loads(line) for line in init.stderr.splitlines() if line.startswith("{")]


def events(init: Initd) -> list[str]:
    return [entry.get("event", "") for entry in logged(init)]


STAGES = ("onCreateCommand", "updateContentCommand", "postCreateCommand", "postStartCommand")


def test_every_command_form(ws: Path, state: Path) -> None:
    wait_for_other = ("touch {me}; i=0; until [ -e {other} ]; do i=$((i+1)); "
                      "if [ $i -gt 200 ]; then exit 1; fi; sleep 0.05; done; echo {me} >> out")
    devcontainer(ws, """{
      // a string runs in /bin/sh, an array runs without a shell, an object in parallel
      "onCreateCommand": "echo \\"string $((1 + 1)) http://example.com//x\\" >> out",
      "updateContentCommand": ["sh", "-c", "printf '%s\\\\n' \\"$1\\" >> out", "sh",
                               "$HOME", ],
      "postCreateCommand": {
        "left": "LEFT",
        "right": ["sh", "-c", "RIGHT"],  /* each waits for the other: only at once can both
                                          finish; alone, each gives up after 10 s */
      },
      "waitFor": "postCreateCommand",
    }""".replace("LEFT", wait_for_other.format(me="left", other="right"))
        .replace("RIGHT", wait_for_other.format(me="right", other="left")))
    init = boot(ws, state, "cat", str(ws / "out"))
    assert init.code == 0, init.stderr
    assert init.stdout_lines[:2] == ["string 2 http://example.com//x", "$HOME"]
    assert sorted(init.stdout_lines[2:]) == ["left", "right"]
    hooks = status(state)
    assert {entry["hookName"]: entry["lastResult"] for entry in hooks.values()} == {
        "onCreateCommand": "success", "updateContentCommand": "success",
        "postCreateCommand.left": "success", "postCreateCommand.right": "success"}
    assert all(entry["type"] == "devcontainer" for entry in hooks.values())
    log = Path(hooks["devcontainer-oncreatecommand"]["outputPath"])
    assert log.exists()


def four_stages(wait_for: str | None, after_agent: bool) -> dict[str, Any]:
    """Each stage appends its name to seq; with ``after_agent`` postCreateCommand first
    waits until the agent has (so only an agent started before it lets it finish)."""
    data: dict[str, Any] = {key: f"echo {key} >> seq" for key in STAGES}
    if after_agent:
        data["postCreateCommand"] = WAIT_LINE.format(line="agent") + \
            "; echo postCreateCommand >> seq"
    if wait_for is not None:
        data["waitFor"] = wait_for
    return data


def test_default_wait_for_the_agent_starts_after_update_content(ws: Path, state: Path
                                                                 ) -> None:
    devcontainer(ws, four_stages(None, after_agent=True))
    # The agent waits for the background stages (to see them), bounded.
    agent = "echo agent >> seq; " + WAIT_LINE.format(line="postStartCommand")
    init = boot(ws, state, "sh", "-c", f"cd {ws} && {agent}")
    assert init.code == 0, init.stderr
    assert seq(ws) == ["onCreateCommand", "updateContentCommand", "agent",
                       "postCreateCommand", "postStartCommand"]


def test_wait_for_post_start_runs_all_four_before_the_agent(ws: Path, state: Path) -> None:
    devcontainer(ws, four_stages("postStartCommand", after_agent=False))
    init = boot(ws, state, "sh", "-c", f"echo agent >> {ws}/seq")
    assert init.code == 0, init.stderr
    assert seq(ws) == [*STAGES, "agent"]


@pytest.mark.slow
def test_a_restart_repeats_only_post_start_and_a_new_container_repeats_all(
        ws: Path, state: Path) -> None:
    devcontainer(ws, four_stages("postStartCommand", after_agent=False))
    agent = ("sh", "-c", f"echo agent >> {ws}/seq")
    for _ in range(2):  # two starts of initd in the same container, with the same state
        assert boot(ws, state, *agent).code == 0
    assert seq(ws) == [*STAGES, "agent", "postStartCommand", "agent"]
    markers = state / "devcontainer" / "lifecycle.json"
    data = json.loads(markers.read_text())
    [mine] = data["configs"].values()
    assert sorted(mine["done"]) == sorted(STAGES[:3])
    # The same state on a volume, seen by another container: nothing counts as done.
    mine["container"] = "containerenv:another-container"
    markers.write_text(json.dumps(data))
    (ws / "seq").unlink()
    init = boot(ws, state, *agent)
    assert init.code == 0, init.stderr
    assert seq(ws) == [*STAGES, "agent"]


def test_a_failed_stage_stops_the_later_ones_and_the_agent_starts_anyway(
        ws: Path, state: Path) -> None:
    devcontainer(ws, {"onCreateCommand": "echo onCreateCommand >> seq",
                      "updateContentCommand": "echo failing >> seq; exit 3",
                      "postCreateCommand": "echo postCreateCommand >> seq",
                      "postStartCommand": "echo postStartCommand >> seq"})
    init = boot(ws, state, "sh", "-c", f"echo agent >> {ws}/seq; exit 7")
    assert init.code == 7, init.stderr
    assert seq(ws) == ["onCreateCommand", "failing", "agent"]
    hooks = status(state)
    assert hooks["devcontainer-updatecontentcommand"]["lastResult"] == "failure"
    assert hooks["devcontainer-updatecontentcommand"]["lastExitCode"] == 3
    assert "devcontainer-postcreatecommand" not in hooks
    said = events(init)
    assert "devcontainer updateContentCommand failed: the later stages do not run (the " \
        "agent starts all the same)" in said
    assert "devcontainer postCreateCommand not run: updateContentCommand failed" in said
    # Not marked done: the next start runs it again (onCreateCommand, done, does not).
    (ws / "seq").unlink()
    assert boot(ws, state, "true").code == 0
    assert seq(ws) == ["failing"]


@pytest.mark.slow
def test_timeout_and_limits_come_from_customizations_and_the_image(
        ws: Path, state: Path, tmp_path: Path) -> None:
    devcontainer(ws, {"onCreateCommand": "head -c 3000000 /dev/zero > big",
                      "postStartCommand": "echo slow >> seq; exec sleep 30",
                      "customizations": {"initd": {"timeout": 1}},
                      "waitFor": "postStartCommand"})
    config = tmp_path / "initd.yaml"
    config.write_text("hook_limits:\n  file_size: 1M\n")
    init = boot(ws, state, "sh", "-c", f"echo agent >> {ws}/seq",
                more=("--config", str(config)))
    assert init.code == 0, init.stderr
    hooks = status(state)
    assert hooks["devcontainer-oncreatecommand"]["killedByLimit"] == \
        "its file_size limit (1 MiB)"
    assert (ws / "big").stat().st_size == 2**20
    assert seq(ws) == ["agent"]  # (onCreateCommand failed: postStartCommand never ran)
    devcontainer(ws, {"postStartCommand": "echo slow >> seq; exec sleep 30",
                      "customizations": {"initd": {"timeout": 1}},
                      "waitFor": "postStartCommand"})
    init = boot(ws, state, "sh", "-c", f"echo agent >> {ws}/seq")
    assert init.code == 0, init.stderr
    assert seq(ws) == ["agent", "slow", "agent"]
    entry = status(state)["devcontainer-poststartcommand"]
    assert (entry["timedOut"], entry["lastExitCode"]) == (True, 124)


def test_stopped_during_a_waited_stage_the_agent_never_starts(ws: Path, state: Path) -> None:
    devcontainer(ws, {"onCreateCommand": "echo started >> seq; exec sleep 100"})
    init = Initd([*args(ws, state), "--", "sh", "-c", f"echo agent >> {ws}/seq"])
    try:
        wait_for(lambda: seq(ws) == ["started"], 20, "onCreateCommand to start")
        init.signal(signal.SIGTERM)
        assert init.wait(15) == 128 + signal.SIGTERM
    finally:
        init.kill()
    assert seq(ws) == ["started"]
    assert "stopped before the agent started" in events(init)
    entry = status(state)["devcontainer-oncreatecommand"]
    assert entry["cancelled"] is True


DAEMON_AGENT = """
import json, os, sys, time
ws, state = sys.argv[1], sys.argv[2]
status = os.path.join(state, "dc", "hooks", "status.json")
deadline = time.monotonic() + 20
def done():
    try:
        entry = json.load(open(status))["hooks"]["devcontainer-poststartcommand"]
    except (OSError, ValueError, KeyError):
        return False
    return entry["lastResult"] == "success"
while not done():  # postStartCommand's shell has exited
    assert time.monotonic() < deadline, "postStartCommand never finished"
    time.sleep(0.05)
def beat():
    return open(os.path.join(ws, "beat")).read()
seen = {beat()}
until = time.monotonic() + 1.5  # past the 0.5 s a pipe is drained for, and more
while time.monotonic() < until:
    seen.add(beat())
    time.sleep(0.05)
print("beats after its shell exited:", len(seen) > 5, flush=True)
"""

LIST_LEFT = """
import os
left = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        cmdline = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\\0", b" ").decode()
    except OSError:
        continue
    if "dc-daemon" in cmdline or "sleep 98" in cmdline:
        left.append(cmdline)
print("left:", left, flush=True)
"""


@pytest.mark.slow
def test_a_daemon_a_command_starts_outlives_its_shell_and_is_stopped_with_initd(
        ws: Path, state: Path) -> None:
    """``nohup x &`` keeps running (and writing to its stdout) after postStartCommand's
    shell exits; initd's stop ends it (TERM first), and a daemon that made a session of
    its own and ignores TERM too: nothing is left in the PID namespace. initd runs under
    a shell that is the namespace's PID 1, which then looks at /proc."""
    daemon = ("trap 'echo TERM >> got; exit 0' TERM; "
              "while :; do echo tick; date +%s%N > beat; sleep 0.1; done")
    devcontainer(ws, {"postStartCommand":
                      f"nohup sh -c \"{daemon}\" dc-daemon & "
                      "setsid sh -c \"trap '' TERM; exec sleep 987\" > /dev/null 2>&1 & "
                      "sleep 986 > /dev/null 2>&1 & "
                      "echo started >> seq"})
    (ws / "agent.py").write_text(textwrap.dedent(DAEMON_AGENT))
    (ws / "left.py").write_text(textwrap.dedent(LIST_LEFT))
    initd = " ".join([sys.executable, "-m", "initd", *args(ws, state), "--", sys.executable,
                      str(ws / "agent.py"), str(ws), str(state)])
    out = subprocess.run([*UNSHARE, "sh", "-c", f"{initd}; echo initd-exit=$?; "
                          f"{sys.executable} {ws / 'left.py'}"],
                         capture_output=True, text=True, timeout=60, cwd=str(ws))
    lines = out.stdout.splitlines()
    assert lines == ["beats after its shell exited: True", "initd-exit=0", "left: []"], \
        out.stdout + out.stderr
    assert (ws / "got").read_text() == "TERM\n"  # stopped, not just killed
    said = [json.loads(line) for line in out.stderr.splitlines() if line.startswith("{")]
    [stopped] = [e for e in said if e.get("event") == "devcontainer: stopped what its "
                 "commands left running"]
    assert stopped["processes"] >= 2  # the daemon's shell and sleep 986 (and its sleep)
    ticks = Path(status(state)["devcontainer-poststartcommand"]["outputPath"]).read_text()
    assert ticks.count("tick") > 5  # its output, read on into the command's log


def test_container_env_and_remote_env(ws: Path, state: Path) -> None:
    devcontainer(ws, {
        "containerEnv": {"TOOLS": "${localEnv:HOME}/tools", "WS": "${containerWorkspaceFolder}",
                         "SECRETLY": "[${localEnv:DISCOBOT_SECRET}][${localEnv:MY_SECRET}]"},
        "remoteEnv": {"PATH": "${containerEnv:PATH}:/extra", "GONE": None,
                      "NAME": "${localWorkspaceFolderBasename}-${localEnv:NOPE:fallback}",
                      "LEFT": "${devcontainerId}", "DISCOBOT_SECRET": "planted"},
        "onCreateCommand": "env > cmd.env"})
    env = {**os.environ, "GONE": "was-here", "DISCOBOT_SECRET": "s3cret", "MY_SECRET": "m1ne",
           "PATH": "/usr/bin:/bin"}
    init = boot(ws, state, "sh", "-c", f"env > {ws}/agent.env", more=("--secret", "MY_SECRET"),
                env=env)
    assert init.code == 0, init.stderr
    home = pwd.getpwuid(os.getuid()).pw_dir if "HOME" not in env else env["HOME"]
    for name in ("cmd.env", "agent.env"):
        seen = dict(line.split("=", 1) for line in (ws / name).read_text().splitlines()
                    if "=" in line)
        assert seen["TOOLS"] == f"{home}/tools", name
        assert seen["WS"] == str(ws)
        assert seen["SECRETLY"] == "[][]"  # a secret never reaches a value
        assert seen["PATH"] == "/usr/bin:/bin:/extra"
        assert "GONE" not in seen
        assert seen["NAME"] == f"{ws.name}-fallback"
        assert seen["LEFT"] == "${devcontainerId}"
    command = (ws / "cmd.env").read_text()
    assert "s3cret" not in command and "m1ne" not in command and "planted" not in command
    assert "DISCOBOT_SESSION_ID=dc" in command
    assert "devcontainer: " in " ".join(events(init)) and \
        "${devcontainerId}: not a variable initd knows" in init.stderr


def test_a_broken_file_is_named_and_the_agent_runs(ws: Path, state: Path) -> None:
    path = devcontainer(ws, '{\n  "onCreateCommand": "echo ran >> seq",\n  "waitFor": 5,\n}')
    init = boot(ws, state, "sh", "-c", f"echo agent >> {ws}/seq; exit 4")
    assert init.code == 4
    assert seq(ws) == ["agent"]
    said = events(init)
    assert f"devcontainer: {path}: waitFor: expected one of initializeCommand, " \
        "onCreateCommand, updateContentCommand, postCreateCommand, postStartCommand, got 5" \
        in said
    assert "devcontainer.json has errors: none of its commands run" in said
    path.write_text('{"onCreateCommand": "echo ran >> seq",, }')
    init = boot(ws, state, "true")
    assert init.code == 0 and seq(ws) == ["agent"]
    assert any(e.startswith(f"devcontainer: {path}: not valid JSON with comments: ")
               for e in events(init))


def test_off_switch_and_a_workspace_nobody_named(ws: Path, state: Path) -> None:
    devcontainer(ws, {"onCreateCommand": "echo ran >> seq"})
    assert boot(ws, state, "true", more=("--no-devcontainer",)).code == 0
    assert seq(ws) == []
    # `initd -- cmd` run tini-style in a checkout (no --workspace): its commands never run
    init = run(["--state-dir", str(state), "--hooks-dir", str(state / "none"), "--", "true"],
               cwd=str(ws))
    assert init.code == 0 and seq(ws) == []


@pytest.mark.slow
def test_trust_refuses_until_a_person_approves(ws: Path, state: Path, tmp_path: Path) -> None:
    devcontainer(ws, {"onCreateCommand": "echo onCreateCommand >> seq",
                      "postStartCommand": "echo postStartCommand >> seq",
                      "remoteEnv": {"FROM_FILE": "yes"}, "waitFor": "postStartCommand"})
    trust = ("--trust", "--trust-file", str(tmp_path / "trust.json"))
    agent = ("sh", "-c", f"echo agent $FROM_FILE >> {ws}/seq")
    init = boot(ws, state, *agent, more=trust)
    assert init.code == 0, init.stderr
    assert seq(ws) == ["agent"]  # refused, and the file's environment not given either
    refused = [e for e in logged(init) if e.get("event") == "hook not run"]
    assert refused[0]["hook"] == "devcontainer-oncreatecommand"
    assert "is not trusted yet: a person must approve it (initd hooks trust" in \
        refused[0]["reason"]
    assert status(state)["devcontainer-oncreatecommand"]["lastExitCode"] == 126
    approve = subprocess.run([sys.executable, "-m", "initd", "hooks", "trust", "--workspace",
                              str(ws), "--hooks-dir", str(state / "none"), *trust[1:]],
                             capture_output=True, text=True, timeout=30)
    assert approve.returncode == 0, approve.stderr
    assert "new        devcontainer onCreateCommand (" in approve.stdout
    (ws / "seq").unlink()
    assert boot(ws, state, *agent, more=trust).code == 0
    assert seq(ws) == ["onCreateCommand", "postStartCommand", "agent yes"]


def test_users(ws: Path, state: Path, agent_user: pwd.struct_passwd) -> None:
    """An agent that is root may name a user (a privilege drop); a non-root agent runs
    them itself; a user passwd does not know runs nothing."""
    who = "id -un >> seq"
    cases = [
        ({}, ("--user", agent_user.pw_name), agent_user.pw_name),
        ({"remoteUser": agent_user.pw_name}, (), agent_user.pw_name),
        ({"containerUser": agent_user.pw_name}, (), agent_user.pw_name),
        ({"remoteUser": "root", "containerUser": agent_user.pw_name}, (), "root"),
        ({"remoteUser": agent_user.pw_name}, ("--user", agent_user.pw_name),
         agent_user.pw_name),
    ]
    for data, more, expected in cases:
        devcontainer(ws, {**data, "onCreateCommand": who})
        shutil.rmtree(state / "devcontainer", ignore_errors=True)  # (run it again)
        (ws / "seq").unlink(missing_ok=True)
        init = boot(ws, state, "true", more=more)
        assert init.code == 0, init.stderr
        assert seq(ws) == [expected], (data, more, init.stderr[-3000:])
    devcontainer(ws, {"remoteUser": "no-such-user-dc", "onCreateCommand": who})
    (ws / "seq").unlink()
    init = boot(ws, state, "sh", "-c", f"echo agent >> {ws}/seq")
    assert init.code == 0 and seq(ws) == ["agent"]
    assert "no such user in the passwd database: the lifecycle commands do not run" in \
        init.stderr


def test_what_initd_does_not_run_is_said_without_v(ws: Path, state: Path) -> None:
    path = devcontainer(ws, {"initializeCommand": "docker pull x", "onCreateCommand": "true"})
    init = run(["--log-format", "json", "--workspace", str(ws), "--state-dir", str(state),
                "--hooks-dir", str(state / "none"), "--no-service", "--", "true"])
    assert init.code == 0, init.stderr
    assert [e["event"] for e in logged(init) if e.get("level") == "warning"] == [
        f"devcontainer: {path}: initializeCommand: not run: it runs on the host before the "
        "container is created, which is the dev container tool's job (initd runs inside)"]


@pytest.mark.slow
def test_post_attach_runs_last_once_the_agent_is_up(ws: Path, state: Path) -> None:
    """postAttachCommand: after postStartCommand (waited for here), and only once the agent
    has started: initd's log says the agent started before the command was spawned (the
    supervisor tells the stage after the agent's start, in that order), and the agent sees
    it run. Once per boot: a second boot runs it again."""
    devcontainer(ws, {"postStartCommand": "echo postStartCommand >> seq",
                      "postAttachCommand": "echo postAttachCommand >> seq",
                      "waitFor": "postStartCommand"})
    for start in (1, 2):
        # (once, the second boot's agent found the first boot's line, exited at once, and
        # its initd never spawned the command: that boot's agent had already ended)
        agent = f"cd {ws} && " + WAIT_NTH_LINE.format(line="postAttachCommand", n=start)
        init = boot(ws, state, "sh", "-c", agent)
        assert init.code == 0, init.stderr
        said = events(init)
        agent_started = next(i for i, e in enumerate(logged(init))
                             if e.get("event") == "started" and e.get("service") == "agent")
        ran = said.index("devcontainer postAttachCommand succeeded")
        assert agent_started < ran, said
        assert seq(ws) == ["postStartCommand", "postAttachCommand"] * start
    assert status(state)["devcontainer-postattachcommand"]["lastResult"] == "success"


def test_post_attach_waits_for_the_agents_readiness(ws: Path, state: Path) -> None:
    """With a readiness check the agent is up once ready: postAttachCommand runs after the
    agent's port answers (the agent writes its line before it listens)."""
    with socket.socket() as probe:  # a free port, for the agent to listen on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    listen = ("import socket, time, os; open('seq', 'a').write('agent\\n'); "
              f"s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); "
              "[time.sleep(0.05) for _ in range(400) if 'postAttachCommand' not in "
              "open('seq').read()]")
    devcontainer(ws, {"postAttachCommand": "echo postAttachCommand >> seq"})
    init = boot(ws, state, "sh", "-c", f"cd {ws} && exec {sys.executable} -c \"{listen}\"",
                more=("--ready-port", str(port)))
    assert init.code == 0, init.stderr
    assert seq(ws) == ["agent", "postAttachCommand"]


def test_a_boot_without_a_devcontainer_json_never_imports_its_parser(
        ws: Path, state: Path) -> None:
    """-X importtime lists every module the supervisor (forked by PID 1) imports."""
    def imported(*more: str) -> set[str]:
        return imports.imported("--state-dir", str(state), "--hooks-dir", str(state / "none"),
                                "--no-service", *more, "--", "true", cwd=ws)
    ours = {"initd.devcontainer.config", "initd.devcontainer.lifecycle", "initd.config.jsonc"}
    assert imported() & ours == set()  # tini-style
    assert imported("--workspace", str(ws)) & ours == set()  # a workspace without one
    devcontainer(ws, {"onCreateCommand": "true"})
    assert imported("--workspace", str(ws)) & ours == ours
