"""``initd hooks trust`` (and ``list``) run by a person as root over the agent's workspace
(invariant 8): whatever the agent planted where a hook config, a hook script, the hooks
directory or ``.claude/`` should be (a link to a root secret, absolute or relative, a link
to another workspace file, a FIFO, a huge file, a hard link to a root file) is refused and
named, never read into the store or the output; the store holds hashes only, 0600, root's;
the untouched hooks are approved and run under ``--trust``, the hook service asking root."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.attack import GIT_ENV, Agent, Canary, agent_script, as_agent

INITD = [sys.executable, "-m", "initd"]
SECRET = secrets.token_hex(16)  # in every root file the agent points at


def claude(cmd: str) -> str:
    return json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": cmd}]}]}})


FORMATS = {  # name: (where in the workspace, its text around a command, the event it fires)
    "claude": (".claude/settings.json", claude, "pre_tool"),
    "iteratr": (".iteratr.hooks.yml", lambda c: f"version: 1\nhooks:\n  pre_iteration:\n"
                f"    - command: {json.dumps(c)}\n", "pre_iteration"),
    "nyzhi": (".nyzhi/config.toml", lambda c: f'[[agent.hooks]]\nevent = "pre_tool"\n'
              f"command = {json.dumps(c)}\n", "pre_tool"),
    "autoagent": (".autoagent/config.json", lambda c: json.dumps(
        {"hooks": {"PreExecutionStart": [{"command": c}]}}), "pre_execution_start"),
    "pipelines": ("pipeline.yaml", lambda c: f"hooks:\n  on_iteration_complete:\n    - type: "
                  f"shell\n      await: true\n      command: {json.dumps(c)}\n",
                  "post_iteration"),
    "devcontainer": (".devcontainer/devcontainer.json",
                     lambda c: json.dumps({"onCreateCommand": c}), None),
    "script": (".discobot/hooks/10-hook.sh",
               lambda c: f"#!/bin/sh\n#---\n# type: session\n#---\n{c}\n", None),
}
FILE_ATTACKS = ["absolute link", "relative link", "link inside", "fifo", "huge", "hard link"]
DIRS = {".claude": ("settings.json", "claude"), ".discobot/hooks": ("10-hook.sh", "script")}
DIR_ATTACKS = ["absolute link", "relative link", "link inside", "fifo"]


@pytest.fixture
def secret(agent: Agent) -> Iterator[Canary]:
    """Root's canary, with each format's file (and the two directories' files) in it,
    every one of them saying SECRET: on the agent's file system, for a hard link."""
    files = {f"secret-{name}": text(f"echo {SECRET}") for name, (_, text, _) in FORMATS.items()}
    files.update({name: FORMATS[fmt][1](f"echo {SECRET}") for name, fmt in DIRS.values()})
    made = Canary(base=os.path.dirname(agent.home), files=files)
    yield made
    made.remove()


@pytest.fixture
def store() -> Iterator[Path]:
    """Where the approvals go: a directory not made yet, in a root-only one."""
    top = Path(tempfile.mkdtemp(prefix="initd-trust-store-"))
    yield top / "trust" / "trust.json"
    shutil.rmtree(top, ignore_errors=True)


def populate(agent: Agent, ws: Path) -> None:
    """Every format's hook, the agent's, each leaving a mark when it runs."""
    for name, (where, text, _) in FORMATS.items():
        path = ws / where
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text(f"touch {ws}/ran-{name}"))
        path.chmod(0o755 if name == "script" else 0o644)
        for made in (path, *path.relative_to(ws).parents):
            os.chown(ws / made, agent.uid, agent.gid)


def plant(agent: Agent, ws: Path, canary: Canary, target: str, attack: str) -> Path:
    """``attack`` at ``target`` (a file of FORMATS, or a directory of DIRS), as the agent
    (a hard link as root makes it for the agent: fs.protected_hardlinks=0 would let it)."""
    path = ws / target
    fmt = next((name for name, spec in FORMATS.items() if spec[0] == target), "")
    aim = canary.dir if target in DIRS else canary.dir / f"secret-{fmt}"
    if attack == "link inside":  # to what was there, moved beside it: still the agent's
        aim = ws / "elsewhere"
        as_agent(agent, f"cp -a {path} {aim}")
    as_agent(agent, f"rm -rf {path}")
    if attack == "absolute link":
        as_agent(agent, f"ln -s {aim} {path}")
    elif attack in ("relative link", "link inside"):
        as_agent(agent, f"ln -s {os.path.relpath(aim, path.parent)} {path}")
    elif attack == "fifo":
        as_agent(agent, f"mkfifo {path}")
    elif attack == "huge":  # the hook as it was, then 64 MiB more (sparse: costs no disk)
        path.write_text(FORMATS[fmt][1]("true"))
        os.chown(path, agent.uid, agent.gid)
        as_agent(agent, f"chmod +x {path} && truncate -s 64M {path}")
    else:
        os.link(aim, path)
    return path


def trust(ws: Path, store: Path, agent: Agent, image: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*INITD, "hooks", "trust", "--workspace", str(ws), "--hooks-dir",
                           image, "--user", agent.name, "--trust-file", str(store)],
                          capture_output=True, text=True, timeout=60, env=GIT_ENV, cwd="/")


def check_store(store: Path, canary: Canary,
                out: subprocess.CompletedProcess[str]) -> dict[str, dict[str, str]]:
    """The secret is nowhere; the store is hashes only, 0600, root's, in a 0700 directory."""
    raw = store.read_text()
    for token in (SECRET, canary.token):
        assert token not in raw and token not in out.stdout + out.stderr
    info, top = store.stat(), store.parent.stat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o600)
    assert (top.st_uid, stat.S_IMODE(top.st_mode)) == (0, 0o700)
    data = json.loads(raw)
    assert data["version"] == 2
    assert all(set(seen) == {"digest", "at"} for seen in data["trusted"].values())
    assert canary.changes() == []
    return data["trusted"]  # type: ignore[no-any-return]


CASES = [(FORMATS[name][0], attack) for name in FORMATS for attack in FILE_ATTACKS]
CASES += [(directory, attack) for directory in DIRS for attack in DIR_ATTACKS]


@pytest.mark.parametrize(("target", "attack"), CASES)
def test_what_the_agent_planted_is_refused_and_the_rest_approved(
        agent: Agent, ws: Path, secret: Canary, store: Path, image: str, sid: str,
        target: str, attack: str) -> None:
    populate(agent, ws)
    planted = plant(agent, ws, secret, target, attack)
    out = trust(ws, store, agent, image)
    assert out.returncode == 0, out.stdout + out.stderr
    trusted = check_store(store, secret, out)
    refused = [line for line in out.stdout.splitlines() if line.startswith("refused ")]
    linked = (target, attack) == (FORMATS["script"][0], "link inside")
    if linked:  # issue 36: a hook that is a link to a file of the workspace (no other link
        # on the way) is that file's hook: approved as that file's bytes, run as it
        assert str(ws / "elsewhere") in trusted and not refused, out.stdout
    else:
        assert [line for line in refused if str(planted) in line], out.stdout
    assert not [key for key in trusted if key.startswith(str(planted))]
    hit = {name for name, (where, _, _) in FORMATS.items()
           if (ws / where).is_relative_to(planted) and not linked}
    for name, (where, _, _) in FORMATS.items():  # every untouched hook: approved
        if name not in hit and not (linked and name == "script"):
            assert [key for key in trusted if key.startswith(str(ws / where))], (name, out)
    if "script" not in hit:  # and it runs under --trust (root checks, the agent runs it)
        ran = subprocess.run([*INITD, "hooks", "run", "10-hook", "--workspace", str(ws),
                              "--hooks-dir", image, "--user", agent.name, "--session-id",
                              sid], capture_output=True, text=True, timeout=60, cwd="/",
                             env={**GIT_ENV, "INITD_TRUST": "1",
                                  "INITD_TRUST_FILE": str(store)})
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert (ws / "ran-script").stat().st_uid == agent.uid


@pytest.mark.parametrize("attack", ["absolute link", "hard link"])
def test_root_listing_shows_nothing_of_a_planted_file(
        agent: Agent, ws: Path, secret: Canary, image: str, attack: str) -> None:
    populate(agent, ws)
    planted = plant(agent, ws, secret, ".claude/settings.json", attack)
    for verb in ("list", "check"):
        out = subprocess.run([*INITD, "hooks", verb, "--workspace", str(ws), "--hooks-dir",
                              image, "--user", agent.name], capture_output=True, text=True,
                             timeout=60, env=GIT_ENV, cwd="/")
        assert SECRET not in out.stdout + out.stderr
        assert [line for line in out.stdout.splitlines() if str(planted) in line
                and ("symbolic link" in line or "belongs to uid 0" in line)], out.stdout
    assert secret.changes() == []


PROBE = """
import json, os, subprocess, sys
ws, events, edit = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] == "edit"
def emit(event):
    data = json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}})
    out = subprocess.run([sys.executable, "-m", "initd", "emit", event, "--data", data],
                         capture_output=True, text=True)
    return out.stdout + out.stderr
said = [emit(event) for event in events]
if edit:  # the agent edits an approved hook
    with open(os.path.join(ws, ".nyzhi", "config.toml"), "a") as f:
        f.write("timeout = 5\\n")
    said.append(emit("pre_tool"))
print(json.dumps(said))
"""


@pytest.mark.parametrize("attacked", [("claude", "nyzhi", "pipelines"),
                                      ("iteratr", "autoagent", "devcontainer", "script")])
def test_approved_hooks_run_under_trust_and_planted_or_changed_ones_do_not(
        boot, agent: Agent, ws: Path, secret: Canary, store: Path, image: str,
        attacked: tuple[str, ...]) -> None:
    """Booted as PID 1 with --user and --trust: the hook service (the agent's) asks root,
    whose store it cannot read; an approved hook runs, one edited since is refused."""
    os.chmod(image, 0o755)  # the agent's service lists the image's hooks too
    populate(agent, ws)
    attacks = iter(["absolute link", "hard link", "relative link", "fifo"])
    for name in attacked:
        plant(agent, ws, secret, FORMATS[name][0], next(attacks))
    out = trust(ws, store, agent, image)
    assert out.returncode == 0, out.stderr
    check_store(store, secret, out)
    events = sorted({event for name, (_, _, event) in FORMATS.items()
                     if event and name not in attacked})
    edit = "keep" if "nyzhi" in attacked else "edit"
    init = boot(sys.executable, agent_script(PROBE), str(ws), json.dumps(events), edit,
                more=("--trust", "--trust-file", str(store)))
    try:
        assert init.wait(timeout=120) == 0, init.stderr
    finally:
        shutil.rmtree(agent.state / "devcontainer", ignore_errors=True)
    said = json.loads(init.stdout_lines[-1])
    assert SECRET not in init.stderr + "".join(said)
    ran = {name for name in FORMATS if (ws / f"ran-{name}").exists()}
    assert ran == set(FORMATS) - set(attacked), said
    if "nyzhi" not in attacked:  # the edit: the session keeps the hook it started with,
        assert "not approved as it is now" not in said[-1]  # approved (invariant 15);
        again = boot(sys.executable, agent_script(PROBE), str(ws),  # the next session
                     json.dumps(["pre_tool"]), "keep",  # reads the edit: not approved
                     more=("--trust", "--trust-file", str(store)))
        assert again.wait(timeout=120) == 0, again.stderr
        assert "not approved as it is now" in json.loads(again.stdout_lines[-1])[0]
    assert secret.changes() == []


def test_an_old_store_keeps_its_approvals_as_hashes_only(
        agent: Agent, ws: Path, store: Path, image: str) -> None:
    """Version 1 kept each hook's command beside its hash, 0644: read, its approvals are
    kept (the same hash of the same text) and the commands are gone; one without a hash
    is said to need approving again."""
    populate(agent, ws)
    script = ws / FORMATS["script"][0]
    digest = hashlib.sha256(str(script).encode() + b"\0" + script.read_bytes()).hexdigest()
    store.parent.mkdir(mode=0o755)
    store.write_text(json.dumps({"version": 1, "trusted": {
        str(script): {"digest": digest, "label": f"touch {SECRET}", "at": "then"},
        f"{ws}/.iteratr.hooks.yml#x": {"label": f"echo {SECRET}"}}}))
    store.chmod(0o644)
    out = trust(ws, store, agent, image)
    assert out.returncode == 0, out.stderr
    assert f"unchanged  {script}" in out.stdout.splitlines()
    assert "1 old approval(s) had no valid hash and are dropped" in out.stdout
    raw = store.read_text()
    assert SECRET not in raw and json.loads(raw)["trusted"][str(script)]["digest"] == digest
    assert stat.S_IMODE(store.stat().st_mode) == 0o600


@pytest.mark.parametrize("how", ["a link", "the agent's", "group-writable", "in the agent's"])
def test_a_store_someone_else_could_change_is_refused(
        agent: Agent, ws: Path, canary: Canary, store: Path, image: str, how: str) -> None:
    populate(agent, ws)
    if how == "in the agent's":  # named by a careless person: in the agent's workspace
        store = ws / "approvals" / "trust.json"
        as_agent(agent, f"mkdir {store.parent}")
    else:
        store.parent.mkdir(mode=0o700)
    if how == "a link":
        store.symlink_to(canary.victim)
    elif how in ("the agent's", "group-writable"):
        store.write_text('{"version": 2, "trusted": {}}')
        store.chmod(0o664 if how == "group-writable" else 0o600)
        if how == "the agent's":
            os.chown(store, agent.uid, agent.gid)
    out = trust(ws, store, agent, image)
    assert out.returncode == 125, out.stdout + out.stderr
    assert len(out.stderr.splitlines()) == 1 and str(store) in out.stderr
    assert canary.changes() == []
    assert not [line for line in out.stdout.splitlines() if line.startswith("new ")]
