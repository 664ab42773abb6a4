"""initd in a real container: podman runs the demo image (make image builds it) as a
container runtime would, and everything is checked from outside, or with podman exec."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from tests.support import podman as support
from tests.support.harness import free_port
from tests.support.podman import assert_commits_are_gated, missing, podman, skip_reason

# one worker runs podman for the container tests (test_adoption.py says why)
pytestmark = pytest.mark.xdist_group("podman")

IMAGE = "localhost/initd-demo:dev"
API = ["/opt/demo/agent-api.py"]
HOME = "/home/agent/.discobot/demo/hooks"


@pytest.fixture(scope="module", autouse=True)
def images() -> None:
    why = missing(IMAGE)
    if why:
        pytest.skip(skip_reason(why))


class Container(support.Container):
    def __init__(self, *args: str, cmd: list[str] | None = None, name: str | None = None
                 ) -> None:
        super().__init__(IMAGE, *args, cmd=cmd, name=name)


@pytest.fixture
def run() -> Iterator[type[Container]]:
    made: list[Container] = []

    def start(*args: str, cmd: list[str] | None = None) -> Container:
        container = Container(*args, cmd=cmd)
        made.append(container)
        return container

    yield start  # type: ignore[misc]
    for container in made:
        container.remove()


def test_the_demo_image_shows_the_whole_flow() -> None:
    out = podman("run", "--rm", IMAGE, timeout=120)
    shown = out.stdout + out.stderr
    assert out.returncode == 3, shown  # the demo agent's own exit code
    for line in ("I am agent (uid 1000)", "[Discobot Hook Failed] \"Python syntax\"",
                 "every one passed", "indexed as agent: hello.py", "zombies now: 0",
                 "commit rejected", "initd: blocked: refusing 'rm -rf build /'"):
        assert line in shown, shown


def test_boot_as_the_contract_says(run) -> None:  # type: ignore[no-untyped-def]
    c = run("-e", "INITD_READY_PORT=8080", cmd=API)
    c.ready()
    # initd is PID 1; the agent API runs as uid 1000 and is ready
    assert "initd" in c.exec("cat", "/proc/1/cmdline").stdout
    table = c.exec("ps", "-A", "-o", "pid=,uid=,args=").stdout
    [api] = [line.split() for line in table.splitlines()  # (initd's own lines name it too)
             if "agent-api.py" in line and "initd" not in line]
    assert api[1] == "1000", table
    health = json.loads(c.exec("initd", "health").stdout)
    assert (health["agent"]["state"], health["agent"]["ready"]) == ("running", True)
    assert health["agent"]["readyBy"] == "port 8080"
    # the session hooks ran before it, as root and as the agent, with the right ids
    status = json.loads(c.exec("cat", f"{HOME}/status.json").stdout)["hooks"]
    assert status["10-system-deps"]["lastResult"] == "success"
    assert "running as root (uid 0)" in c.exec("cat", f"{HOME}/output/10-system-deps.log"
                                               ).stdout
    assert "running as agent (uid 1000, groups 1000)" in c.exec(
        "cat", f"{HOME}/output/20-dev-env.log").stdout
    assert status["40-optional-tool"]["lastResult"] == "failure"  # and boot went on


def test_the_pre_commit_chain_and_a_turn_over_the_socket(run) -> None:  # type: ignore[no-untyped-def]
    c = run(cmd=API)
    c.ready()
    assert_commits_are_gated(c)
    c.exec("sh", "-c", "printf 'print(1\\n' > bad.py", user="agent")
    turn = c.exec("initd", "turn")
    assert turn.returncode == 2  # re-prompt the agent
    answer = json.loads(turn.stdout)
    assert answer["message"].startswith('[Discobot Hook Failed] "Python syntax"')
    assert "bad.py:1:" in answer["message"]
    blocked = c.exec("initd", "emit", "pre_tool", "--data",
                     '{"tool_name": "bash", "command": "rm -rf /"}')
    assert blocked.returncode == 2


def test_an_orphan_left_by_a_hook_is_reaped(run) -> None:  # type: ignore[no-untyped-def]
    c = run(cmd=API)
    c.ready()
    assert "left a daemon" in c.exec("cat", f"{HOME}/output/25-leave-a-daemon.log").stdout
    c.until(lambda: "sleep 2" not in c.exec("ps", "-A", "-o", "args=").stdout,
            what="the daemon to exit")
    states = c.exec("ps", "-A", "-o", "stat=").stdout.split()
    assert states and not [s for s in states if s.startswith("Z")]


@pytest.mark.parametrize(("remap", "code"), [([], 143), (["-e", "INITD_REMAP_EXIT=143:0"], 0)])
def test_podman_stop_is_graceful_and_the_exit_code_is_the_agents(run, remap: list[str],
                                                                 code: int) -> None:  # type: ignore[no-untyped-def]
    c = run(*remap, cmd=API)
    c.ready()
    assert podman("stop", "-t", "20", c.name, timeout=60).returncode == 0
    assert c.exit_code() == code  # TERM did it: a SIGKILL at -t 20 would be 137


def test_podman_kill_usr1_reaches_the_agent(run) -> None:  # type: ignore[no-untyped-def]
    c = run(cmd=API)
    c.ready()
    assert podman("kill", "-s", "USR1", c.name).returncode == 0
    c.until(lambda: "agent API got SIGUSR1" in c.logs(), what="the signal")
    assert podman("inspect", c.name, "--format", "{{.State.Running}}").stdout.strip() == "true"


def test_a_crash_looping_agent_ends_the_container_with_its_code(run) -> None:  # type: ignore[no-untyped-def]
    c = run("-e", "INITD_RESTART=on-failure", "-e", "INITD_MAX_RESTARTS=2",
            cmd=["sh", "-c", "echo try; exit 7"])
    assert c.exit_code() == 7
    assert c.logs().count("try") == 3  # the first run and two restarts


def test_status_survives_a_container_restart_on_a_volume(run) -> None:  # type: ignore[no-untyped-def]
    volume = f"initd-e2e-{uuid.uuid4().hex[:8]}"
    assert podman("volume", "create", volume).returncode == 0
    try:
        for expected_runs in (1, 2):
            c = run("-v", f"{volume}:/home/agent/.discobot", cmd=API)
            c.ready()
            status = json.loads(c.exec("cat", f"{HOME}/status.json").stdout)
            assert status["hooks"]["10-system-deps"]["runCount"] == expected_runs
            podman("stop", "-t", "10", c.name, timeout=60)
            c.remove()
    finally:
        podman("volume", "rm", "-f", volume)


def manifest() -> list[dict]:  # type: ignore[type-arg]
    from pathlib import Path

    import yaml

    path = Path(__file__).resolve().parents[2] / "images" / "k8s" / "agent.yaml"
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


PORTS = {"agent-api": 8080, "initd-probes": 9090}  # the manifest's containerPorts


def probe(c: Container, spec: dict) -> int:  # type: ignore[type-arg]
    """One probe of the manifest, as the kubelet runs it: exec, HTTP GET or TCP connect."""
    if "exec" in spec:
        return c.exec(*spec["exec"]["command"]).returncode
    if "httpGet" in spec:
        url = f"http://127.0.0.1:{PORTS[spec['httpGet']['port']]}{spec['httpGet']['path']}"
        return c.exec("python3", "-c", f"import urllib.request as u; u.urlopen({url!r}, "
                      "timeout=2)").returncode
    return c.exec("python3", "-c", "import socket; socket.create_connection(('127.0.0.1', "
                  f"{PORTS[spec['tcpSocket']['port']]}), 2)").returncode


def test_the_kubernetes_probes_answer_as_the_manifest_expects(run) -> None:  # type: ignore[no-untyped-def]
    """images/k8s/agent.yaml's probes, run in the container as the kubelet would."""
    [deployment] = [d for d in manifest() if d["kind"] == "Deployment"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    probes = {name: container[name]
              for name in ("startupProbe", "readinessProbe", "livenessProbe")}
    env = [f"{e['name']}={e['value']}" for e in container["env"] if "value" in e]
    c = run(*(arg for item in env for arg in ("-e", item)), cmd=container["args"])
    c.ready()
    for name, spec in probes.items():
        assert probe(c, spec) == 0, name
    # the hook service down (killed; initd restarts it): the pod stays live and ready
    c.exec("pkill", "-KILL", "-f", "m initd servic[e]")
    assert probe(c, probes["livenessProbe"]) == 0
    # an agent that never opens its port: never ready, saying why
    waiting = run("-e", "INITD_READY_PORT=9999", "-e", "INITD_HEALTH_PORT=9090", cmd=API)
    waiting.until(lambda: waiting.exec("initd", "health").returncode == 0, what="the service")
    assert probe(waiting, probes["readinessProbe"]) != 0
    not_ready = waiting.exec("python3", "-c", "import urllib.request as u, urllib.error as e\n"
                             "try: u.urlopen('http://127.0.0.1:9090/readyz', timeout=2)\n"
                             "except e.HTTPError as err: print(err.code, err.read().decode())")
    assert not_ready.stdout.startswith("503") and "ready once port 9999 answers" in \
        not_ready.stdout


def test_podman_kube_play_of_the_manifest_and_a_graceful_pod_stop(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """images/k8s/agent.yaml under a real engine: named for this run only (two runs on
    one host never share a pod or a volume). Podman before 4.6 races removing a "once"
    init container (podman#18477), so the seeding init container is left out here: a
    podman volume is seeded from the image's /workspace by podman itself."""
    import yaml

    suffix = uuid.uuid4().hex[:8]
    docs = manifest()
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    claims = {}
    for doc in docs:
        if doc["kind"] == "PersistentVolumeClaim":
            claims[doc["metadata"]["name"]] = doc["metadata"]["name"] = \
                f"{doc['metadata']['name']}-{suffix}"
    deployment["metadata"]["name"] = f"initd-e2e-{suffix}"
    pod = deployment["spec"]["template"]["spec"]
    pod.pop("initContainers")
    for volume in pod["volumes"]:
        claim = volume["persistentVolumeClaim"]
        claim["claimName"] = claims[claim["claimName"]]
    # podman 4 publishes a containerPort without a hostPort on the host's same port: two
    # runs at once then both bound :8080 (make test-stress). A free port of this run's own.
    for container in pod["containers"]:
        for port in container.get("ports", []):
            port["hostPort"] = free_port()
    path = tmp_path / "agent.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    played = podman("kube", "play", str(path), timeout=120)
    try:
        assert played.returncode == 0, played.stderr
        pod_id = played.stdout.split("Pod:")[1].split()[0]
        names = podman("pod", "inspect", pod_id, "--format",
                       "{{range .Containers}}{{.Name}} {{end}}").stdout.split()
        [name] = [n for n in names if n.endswith("-agent")]
        c = Container(name=name)
        c.ready()  # the readiness probe's command
        # containerPort 8080 answers from outside the pod (the liveness probe's port)
        infra = podman("pod", "inspect", pod_id, "--format", "{{.InfraContainerID}}").stdout
        ip = podman("inspect", infra.strip(), "--format",
                    "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}").stdout.strip()
        import urllib.request

        with urllib.request.urlopen(f"http://{ip}:8080/", timeout=5) as answer:
            assert answer.status == 200
        with urllib.request.urlopen(f"http://{ip}:9090/readyz", timeout=5) as answer:
            assert json.loads(answer.read())["ready"] is True  # the kubelet's httpGet
        # the fresh state volume: made the agent's, under the pod's name (fieldRef)
        sid = c.exec("sh", "-c", "echo $INITD_SESSION_ID").stdout.strip()
        assert sid.startswith(f"initd-e2e-{suffix}")
        status = f"/home/agent/.discobot/{sid}/hooks/status.json"
        assert c.exec("stat", "-c", "%u", status).stdout.strip() == "1000"
        hooks = json.loads(c.exec("cat", status).stdout)["hooks"]
        assert hooks["10-system-deps"]["lastResult"] == "success"  # the image's hooks ran
        assert json.loads(c.exec("initd", "health").stdout)["status"] == "ok"
        # a graceful stop: TERM to initd, the agent's own exit code, well inside the grace
        assert podman("pod", "stop", "-t", "30", pod_id, timeout=60).returncode == 0
        assert c.exit_code() == 143  # TERM did it: a SIGKILL at -t 30 would be 137
        assert "Traceback" not in c.logs()
    finally:
        podman("kube", "down", str(path), timeout=60)
        podman("volume", "rm", "-f", *claims.values())


# What docs/security.md says initd needs: nothing beyond these six.
CAPABILITIES = "CHOWN,DAC_OVERRIDE,FOWNER,KILL,SETUID,SETGID"


def test_the_listed_capabilities_are_all_initd_needs(run) -> None:  # type: ignore[no-untyped-def]
    c = run("--cap-drop", "all", "--cap-add", CAPABILITIES, cmd=API)
    c.ready()
    status = json.loads(c.exec("cat", f"{HOME}/status.json").stdout)["hooks"]
    assert status["10-system-deps"]["lastResult"] == "success"  # a root hook
    assert status["20-dev-env"]["lastResult"] == "success"  # dropped to the agent
    owners = c.exec("stat", "-c", "%u", f"{HOME}/status.json", f"{HOME}/output").stdout
    assert owners.split() == ["1000", "1000"]  # what root made there is the agent's
    c.exec("sh", "-c", "printf 'print(1\\n' > bad.py", user="agent")
    assert c.exec("initd", "turn").returncode == 2  # the service, the re-prompt
    assert podman("stop", "-t", "20", c.name, timeout=60).returncode == 0
    assert c.exit_code() == 143


def test_no_new_privileges_runs_everything_and_setuid_gives_the_agent_nothing(run) -> None:  # type: ignore[no-untyped-def]
    """--security-opt no-new-privileges (Kubernetes' allowPrivilegeEscalation: false), as
    the README recommends: root's hooks and the drop to the agent work, and a setuid-root
    program (a copy of cat, as a root session hook could leave) reads nothing of root's."""
    c = run("--security-opt", "no-new-privileges", cmd=API)
    c.ready()
    status = json.loads(c.exec("cat", f"{HOME}/status.json").stdout)["hooks"]
    assert status["10-system-deps"]["lastResult"] == "success"  # a root hook
    assert status["20-dev-env"]["lastResult"] == "success"  # dropped to the agent
    assert "NoNewPrivs:\t1" in c.exec("cat", "/proc/1/status").stdout
    assert c.exec("sh", "-c", "cp /bin/cat /usr/local/bin/rcat && chmod 4755 "
                  "/usr/local/bin/rcat").returncode == 0  # (as root, as a root hook would)
    read = c.exec("rcat", "/etc/shadow", user="agent")
    assert read.returncode != 0 and "root:" not in read.stdout
    c.exec("sh", "-c", "printf 'print(1\\n' > bad.py", user="agent")
    assert c.exec("initd", "turn").returncode == 2  # the service, the re-prompt
    assert podman("stop", "-t", "20", c.name, timeout=60).returncode == 0
    assert c.exit_code() == 143


def test_a_link_the_agent_plants_in_its_state_gives_it_nothing(run) -> None:  # type: ignore[no-untyped-def]
    """The attack of tests/security, in the real image: the agent makes its state's
    output directory a link to /etc, kills its own hook service and asks for a file
    hook and a turn (its service, as the agent, refuses the link); /etc stays root's,
    untouched."""
    c = run(cmd=API)
    c.ready()
    before = c.exec("sh", "-c", "ls -ln /etc | md5sum; stat -c %u:%a /etc /etc/shadow").stdout
    attack = c.exec("sh", "-c", f"rm -rf {HOME}/output && ln -s /etc {HOME}/output && "
                    "pkill -KILL -f 'm initd servic[e]'; sleep 3; echo x >> /workspace/x.py; "
                    "initd hooks rerun 70-index; initd turn; true", user="agent", timeout=60)
    assert attack.returncode == 0, attack.stderr
    # the agent's own service runs its file hook (as the agent: its log is not written
    # through the link), and nothing of root's changed
    assert "internal error" not in attack.stdout + attack.stderr
    assert '"hookId": "70-index"' in attack.stdout
    c.until(lambda: c.exec("initd", "health").returncode == 0, what="the service back")
    after = c.exec("sh", "-c", "ls -ln /etc | md5sum; stat -c %u:%a /etc /etc/shadow").stdout
    assert after == before
    assert c.exec("test", "-O", "/etc/shadow", user="agent").returncode != 0


def test_a_non_root_container_runs_everything_as_that_user(run) -> None:  # type: ignore[no-untyped-def]
    """podman run --user 1000: no root to drop from; the socket is the user's own."""
    c = run("--user", "1000", "-e", "INITD_READY_PORT=8080", cmd=API)
    c.ready()  # the probe, as the same user, finds the socket without INITD_SOCKET
    health = json.loads(c.exec("initd", "health").stdout)
    assert health["status"] == "ok" and health["agent"]["ready"] is True
    table = c.exec("ps", "-A", "-o", "uid=,args=").stdout
    assert {line.split()[0] for line in table.splitlines()} == {"1000"}, table
    assert c.exec("stat", "-c", "%u %a", "/tmp/initd-1000").stdout.split() == ["1000", "700"]
    assert "Traceback" not in c.logs()
    assert podman("stop", "-t", "20", c.name, timeout=60).returncode == 0
    assert c.exit_code() == 143


def test_a_random_uid_runs_degraded_and_says_why_once(run) -> None:  # type: ignore[no-untyped-def]
    """OpenShift's arbitrary uid: no passwd entry, HOME=/ (podman's), the image's
    INITD_USER=agent. The agent runs; what cannot be kept is said once."""
    c = run("--user", "1000680000:0", cmd=API)
    c.until(lambda: c.exec("initd", "health").returncode == 0, what="the service")
    health = json.loads(c.exec("initd", "health").stdout)
    assert health["status"] == "degraded", health
    assert "/.discobot cannot be written" in health["problems"][0]
    logs = c.logs()
    assert logs.count("not as user 'agent'") == 1, logs
    assert logs.count("cannot be written") == 1, logs
    assert "Traceback" not in logs


def test_a_read_only_root_without_a_volume_is_degraded_not_broken(run) -> None:  # type: ignore[no-untyped-def]
    c = run("--read-only", cmd=API)
    c.until(lambda: c.exec("initd", "health").returncode == 0, what="the service")
    health = json.loads(c.exec("initd", "health").stdout)
    assert health["status"] == "degraded"
    assert health["problems"][0].startswith(
        "initd's state directory /home/agent/.discobot cannot be written (Read-only")
    assert "-v NAME:/home/agent/.discobot" in health["problems"][0]
    turn = c.exec("initd", "turn", user="agent")
    assert turn.returncode in (0, 2), turn.stdout + turn.stderr  # evaluated, in memory
    assert "internal error" not in c.logs() + turn.stderr
    assert c.logs().count("cannot be written") == 1


def test_a_read_only_root_with_a_state_volume_keeps_everything(run) -> None:  # type: ignore[no-untyped-def]
    volumes = [f"initd-e2e-{name}-{uuid.uuid4().hex[:8]}" for name in ("ws", "state")]
    try:
        c = run("--read-only", "--cap-drop", "all", "--cap-add", CAPABILITIES,
                "-v", f"{volumes[0]}:/workspace", "-v", f"{volumes[1]}:/home/agent/.discobot",
                cmd=API)
        c.ready()
        assert json.loads(c.exec("initd", "health").stdout)["status"] == "ok"
        status = json.loads(c.exec("cat", f"{HOME}/status.json").stdout)["hooks"]
        assert status["10-system-deps"]["lastResult"] == "success"
        c.exec("sh", "-c", "printf 'print(1\\n' > bad.py", user="agent")
        assert c.exec("initd", "turn", user="agent").returncode == 2  # the re-prompt
        assert "cannot be written" not in c.logs()
        assert podman("stop", "-t", "20", c.name, timeout=60).returncode == 0
        assert c.exit_code() == 143
    finally:
        podman("rm", "-f", "-t", "0", c.name)
        podman("volume", "rm", "-f", *volumes)
