"""Red team: the agent user (untrusted) against the services of the image's config, through
what it can reach: the control socket, /proc, the workspace (SERVICES-SPEC.md,
"Configuration", "Control and visibility"; ARCHITECTURE.md invariant 8).

- It controls only its own services: restart, stop and start of a root service answer
  403 and leave its process alone; its own service it may restart (the control: the
  endpoint is there and works).
- It never reads a root service's environment: /proc/PID/environ is the kernel's to refuse
  (ptrace access mode), and the control API never shows an environment, of any service.
- A workspace file (.discobot/…, .devcontainer/devcontainer.json, a .env) neither adds a
  service nor changes one: the services are the image's config file's alone.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import subprocess
from pathlib import Path

import pytest

from tests.services.support import (
    PY,
    Boot,
    agent_request,
    as_user,
    count,
    host_pid,
    pid_of,
    standin,
    wait_state,
)
from tests.support.harness import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
READ = "import sys; print(open(sys.argv[1], 'rb').read())"


def test_the_agent_cannot_control_a_service_of_another_user(
        boot: Boot, box: Path, agent_user: pwd.struct_passwd) -> None:
    services = {"rootsvc": {"user": "root", "command": standin(box, "rootsvc")},
                "mine": {"command": standin(box, "mine")}}  # the agent's (the default user)
    init = boot(services)
    before = wait_state(init, "rootsvc", "running")["pid"]
    for verb in ("restart", "stop", "start"):
        code, body = agent_request(agent_user.pw_name, init, "POST",
                                   f"/v1/services/rootsvc/{verb}")
        assert code == 403, (verb, body)
    out = subprocess.run(["runuser", "-u", agent_user.pw_name, "--", PY, "-m", "initd",
                          "services", "restart", "rootsvc"], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "INITD_SOCKET": init.socket},
                         cwd="/")
    assert out.returncode != 0, out.stdout
    assert wait_state(init, "rootsvc", "running")["pid"] == before
    assert count(box, r"rootsvc start \d+") == 1 and count(box, r"rootsvc stopping \w+") == 0
    mine = pid_of(box, "mine")
    code, body = agent_request(agent_user.pw_name, init, "POST", "/v1/services/mine/restart")
    assert 200 <= code < 300, body
    wait_for(lambda: count(box, r"mine start \d+") == 2, timeout=60, what="mine restarted")
    assert wait_state(init, "mine", "running")["pid"] != mine


def test_the_agent_never_reads_a_services_environment(
        boot: Boot, box: Path, agent_user: pwd.struct_passwd) -> None:
    token, own, hidden = (secrets.token_hex(12) for _ in range(3))
    services = {"rootsvc": {"user": "root", "command": standin(box, "rootsvc"),
                            "environment": {"API_TOKEN": token}},
                "mine": {"command": standin(box, "mine"), "environment": {"MINE": own}}}
    env = {k: v for k, v in os.environ.items() if not k.startswith("INITD_")}
    init = boot(services, env={**env, "DISCOBOT_SECRET": hidden})
    root_pid = host_pid(init, wait_state(init, "rootsvc", "running")["pid"])
    mine_pid = host_pid(init, wait_state(init, "mine", "running")["pid"])
    assert token.encode() in Path(f"/proc/{root_pid}/environ").read_bytes()  # (the premise)
    stolen = as_user(agent_user.pw_name, READ, f"/proc/{root_pid}/environ")
    assert stolen.returncode != 0 and "PermissionError" in stolen.stderr, stolen.stdout
    for path in ("/v1/services", "/v1/health", "/v1/status"):
        _, body = agent_request(agent_user.pw_name, init, "GET", path)
        assert token not in body and own not in body and hidden not in body, path
    listed = subprocess.run(["runuser", "-u", agent_user.pw_name, "--", PY, "-m", "initd",
                             "services", "--json"], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "INITD_SOCKET": init.socket},
                            cwd="/")
    assert token not in listed.stdout + listed.stderr and own not in listed.stdout
    # SERVICES-SPEC.md: the secrets initd removes from hooks are removed from services
    for pid in (root_pid, mine_pid):
        assert hidden.encode() not in Path(f"/proc/{pid}/environ").read_bytes()
    agent = host_pid(init, pid_of(box, "agent"))
    assert token.encode() not in Path(f"/proc/{agent}/environ").read_bytes()


def plant(ws: Path, box: Path, owner: pwd.struct_passwd) -> None:
    """Every place a workspace could say services: initd's config file's name in the
    workspace, devcontainer.json (its environment, its customizations, its env file), a
    .env; each adds ``evil`` (as root) and changes ``web``. Owned by the agent."""
    evil = {"user": "root", "command": f"id -u > {box}/evil-ran"}
    changed = {"command": f"id -u > {box}/web-changed"}
    yaml_text = json.dumps({"services": {"evil": evil, "web": changed}})  # (JSON is YAML)
    for name in (".discobot/initd.yaml", ".discobot/services.yaml", "initd.yaml",
                 ".initd.yaml", ".devcontainer/initd.yaml"):
        (ws / name).parent.mkdir(exist_ok=True)
        (ws / name).write_text(yaml_text)
    pointed = {"INITD_CONFIG": str(ws / "initd.yaml"),
               "INITD_SERVICES_LOG_DIR": str(ws / "logs")}
    (ws / ".env").write_text("".join(f"{k}={v}\n" for k, v in pointed.items()))
    (ws / ".devcontainer" / "devcontainer.json").write_text(json.dumps({
        "containerEnv": pointed, "remoteEnv": pointed, "runArgs": ["--env-file", ".env"],
        "customizations": {"initd": {"services": {"evil": evil, "web": changed}}}}))
    for path in [ws, *ws.rglob("*")]:
        os.chown(path, owner.pw_uid, owner.pw_gid)


def test_a_workspace_file_cannot_add_or_change_a_service(
        boot: Boot, box: Path, ws: Path, agent_user: pwd.struct_passwd) -> None:
    plant(ws, box, agent_user)
    init = boot({"web": {"command": standin(box, "web")}})
    assert wait_state(init, "web", "running")
    code, body = agent_request(agent_user.pw_name, init, "GET", "/v1/services")
    assert code == 200 and "evil" not in body, body
    code, _ = agent_request(agent_user.pw_name, init, "POST", "/v1/services/web/restart")
    assert 200 <= code < 300  # a start again reads nothing of the workspace either
    wait_for(lambda: count(box, r"web start \d+") == 2, timeout=60, what="web restarted")
    code, _ = agent_request(agent_user.pw_name, init, "POST", "/v1/services/evil/start")
    assert code in (403, 404)
    assert not (box / "evil-ran").exists() and not (box / "web-changed").exists()
    assert not (ws / "logs").exists()
