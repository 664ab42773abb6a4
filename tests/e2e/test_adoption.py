"""initd adopted by agent images, as the README says: its Dockerfile blocks, taken from
README.md as written (only FROM names a local base, and the test's CMD replaces the
example's), built with podman from three bases made by mmdebstrap:

- a Node image (Debian minbase, nodejs, git; no Python): the bundle;
- a bare one (Debian minbase, ca-certificates, git; no Python): the bundle, on Debian 12
  and on Debian 13 (glibc 2.41, for the README's "and newer");
- initd's own base (Debian's Python 3.11): the bundle, and the wheels in a venv.

Each then runs the same workspace (tests/e2e/adoption) with the README's capabilities:
PID 1, reaping, session hooks as root and as the agent, the pre-commit chain on a commit,
a turn over the socket, a graceful podman stop, and exit codes."""

from __future__ import annotations

import json
import re
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.podman import Container, assert_commits_are_gated, missing, podman, skip_reason

# one worker runs podman for the container tests: a build beside another's `rmi` once
# failed ("layer not known"), and each image is built once, not once for each worker
pytestmark = pytest.mark.xdist_group("podman")

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent / "adoption"
BUNDLE = "localhost/initd-bundle:dev"
STATE = "/home/agent/.discobot/adopt/hooks"
CAPS = ["--cap-drop", "all", "--cap-add", "CHOWN,DAC_OVERRIDE,FOWNER,KILL,SETUID,SETGID"]

# (base, how the README adds initd, the agent's command, its port or None)
CASES = {
    "node": ("localhost/initd-base-node:bookworm", "bundle",
             ["node", "/opt/agent/server.js"], 8080),
    "minimal": ("localhost/initd-base-minimal:bookworm", "bundle", ["sleep", "infinity"],
                None),
    "trixie": ("localhost/initd-base-trixie:trixie", "bundle", ["sleep", "infinity"], None),
    "initd-base": ("localhost/initd-base:bookworm", "bundle", ["sleep", "infinity"], None),
    "wheels": ("localhost/initd-base:bookworm", "wheels", ["sleep", "infinity"], None),
}


def readme_block(marker: str) -> list[str]:
    """The README's ```dockerfile block that contains ``marker``, as lines."""
    text = (ROOT / "README.md").read_text()
    for block in re.findall(r"```dockerfile\n(.*?)```", text, re.S):
        if marker in block:
            return block.splitlines()
    raise AssertionError(f"README.md has no dockerfile block with {marker!r}")


def containerfile(base: str, form: str) -> str:
    """The README's block for ``form`` with FROM ``base`` and without its example CMD,
    then the test's workspace (tests/e2e/adoption/Containerfile.test)."""
    marker = {"bundle": f"COPY --from={BUNDLE}", "wheels": "COPY build/wheels"}[form]
    lines = readme_block(marker)
    assert sum(line.startswith("FROM ") for line in lines) == 1
    kept = [f"FROM {base}" if line.startswith("FROM ") else line for line in lines
            if not line.startswith("CMD ")]
    return "\n".join([*kept, (HERE / "Containerfile.test").read_text()])


class Adopted:
    """One adoption image, built for this run (two runs on a host never share it)."""

    def __init__(self, case: str, tmp: Path) -> None:
        self.case = case
        base, form, self.cmd, self.port = CASES[case]
        self.initd = "/opt/initd/initd" if form == "bundle" else "initd"
        self.tag = f"localhost/initd-adopt-{case}:{uuid.uuid4().hex[:8]}"
        shutil.copytree(HERE, tmp, dirs_exist_ok=True)
        if form == "wheels":
            shutil.copytree(ROOT / "build" / "wheels", tmp / "build" / "wheels")
        (tmp / "Containerfile").write_text(containerfile(base, form))
        for _ in range(3):  # podman's own race: a build beside another run's `rmi`
            built = podman("build", "--quiet", "--network=none", "-t", self.tag, str(tmp),
                           timeout=300)
            if built.returncode == 0 or "not known" not in built.stderr:
                break
        assert built.returncode == 0, built.stderr

    def run(self, *args: str, cmd: list[str] | None = None) -> Container:
        env = ["-e", f"INITD_READY_PORT={self.port}"] if self.port and cmd is None else []
        return Container(self.tag, *CAPS, *env, *args, cmd=cmd or self.cmd,
                         initd=self.initd)


@pytest.fixture(scope="module", params=list(CASES))
def image(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Adopted]:
    base = CASES[request.param][0]
    why = missing(BUNDLE, base)
    if why is None and CASES[request.param][1] == "wheels" and \
            not list((ROOT / "build" / "wheels").glob("agent_initd-*.whl")):
        why = "no wheels in build/wheels"
    if why:
        pytest.skip(skip_reason(why))
    adopted = Adopted(request.param, tmp_path_factory.mktemp(f"adopt-{request.param}"))
    yield adopted
    podman("rmi", "-f", adopted.tag)


@pytest.fixture(scope="module")
def agent(image: Adopted) -> Iterator[Container]:
    """The image running its agent, ready: shared by the tests that only look."""
    c = image.run()
    try:
        c.ready()
        yield c
    finally:
        c.remove()


def test_initd_is_pid_1_and_the_agent_runs_dropped_and_clean(image: Adopted, agent: Container
                                                             ) -> None:
    cmdline = agent.exec("cat", "/proc/1/cmdline").stdout.split("\0")
    assert cmdline[:3] == (["/opt/initd/bin/python3", "/usr/local/bin/initd", "--user"]
                           if image.case == "wheels" else
                           ["/opt/initd/bin/python3.11", "-IS", "/opt/initd/initd"])
    health = json.loads(agent.exec(image.initd, "health").stdout)
    assert health["status"] == "ok", health
    assert health["agent"]["ready"] is True
    status = agent.exec("cat", f"/proc/{health['agent']['pid']}/status").stdout
    fields = {k: v.strip() for k, v in (line.split(":", 1) for line in status.splitlines())}
    assert fields["Uid"].split() == ["1000"] * 4
    assert fields["SigBlk"] == "0" * 16  # 32 and 33 too
    # node ignores SIGPIPE and SIGXFSZ itself at start; sleep keeps what it was given
    assert fields["SigIgn"] == ("0000000001001000" if image.case == "node" else "0" * 16)
    if image.port:  # the agent API answers on its port, from inside the container
        assert "agent API on :8080 as uid 1000" in agent.logs()


def test_the_bases_without_python_have_none(image: Adopted, agent: Container) -> None:
    has = agent.exec("sh", "-c", "command -v python3").returncode == 0
    assert has == (image.case in ("initd-base", "wheels"))


def test_session_hooks_ran_as_root_and_as_the_agent(agent: Container) -> None:
    hooks = json.loads(agent.exec("cat", f"{STATE}/status.json").stdout)["hooks"]
    assert {hooks[h]["lastResult"] for h in ("10-root", "20-user", "25-daemon")} == \
        {"success"}
    assert "root hook as uid 0" in agent.exec("cat", f"{STATE}/output/10-root.log").stdout
    assert "user hook as uid 1000" in agent.exec("cat", f"{STATE}/output/20-user.log").stdout


def zombies(c: Container) -> list[str]:
    states = c.exec("sh", "-c", "cat /proc/[0-9]*/stat 2>/dev/null").stdout.splitlines()
    return [line for line in states if line.rsplit(")", 1)[-1].split()[0] == "Z"]


def test_orphans_are_reaped(agent: Container) -> None:
    # an orphan of an exec'd shell is PID 1's; the session hook's daemon was too
    agent.exec("sh", "-c", "sh -c 'sleep 0.5 & exit 0'")
    def orphans() -> list[str]:
        out = agent.exec("sh", "-c", "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f;"
                         " echo; done").stdout.splitlines()
        return [line for line in out if line.startswith(("sleep 0.5", "sleep 2"))]

    agent.until(lambda: orphans() == [], what="the orphans to exit")
    time.sleep(0.3)
    assert zombies(agent) == []


def test_the_pre_commit_chain_runs_on_a_commit(agent: Container) -> None:
    assert_commits_are_gated(agent)


def test_a_turn_over_the_socket(image: Adopted, agent: Container) -> None:
    agent.exec("sh", "-c", "echo bad > notes.txt", user="agent")
    turn = agent.exec(image.initd, "turn", user="agent")
    assert turn.returncode == 2, turn.stdout + turn.stderr  # re-prompt the agent
    assert "notes.txt says bad" in json.loads(turn.stdout)["message"]
    agent.exec("sh", "-c", "echo good > notes.txt", user="agent")
    assert agent.exec(image.initd, "turn", user="agent").returncode == 0


def test_podman_stop_is_graceful_and_the_code_is_the_agents(image: Adopted) -> None:
    c = image.run()
    try:
        c.ready()
        assert podman("stop", "-t", "20", c.name, timeout=60).returncode == 0
        # the agent died of the TERM initd passed on: no KILL at -t 20 (that is 137)
        assert c.exit_code() == 143
        assert "Traceback" not in c.logs()
    finally:
        c.remove()


@pytest.mark.parametrize(("cmd", "code"), [(["sh", "-c", "exit 7"], 7),
                                           (["/no/such/agent"], 127)])
def test_exit_codes(image: Adopted, cmd: list[str], code: int) -> None:
    c = image.run(cmd=cmd)
    try:
        assert c.exit_code() == code, c.logs()
    finally:
        c.remove()
