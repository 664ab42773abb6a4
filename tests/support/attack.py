"""The agent as an attacker (ARCHITECTURE.md, invariant 8): a real user made for this test run,
root-owned canaries that prove what root did or did not do, and a workspace the agent
owns, for initd booted as PID 1 with ``--user``.

Everything here is made fresh and named uniquely, so two suites on one host never share
a user, a home, a canary or a session.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import secrets
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.support.users import remove_user

GIT_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


class Agent(NamedTuple):
    name: str
    uid: int
    gid: int
    home: str

    @property
    def state(self) -> Path:
        return Path(self.home, ".discobot")


def make_agent() -> Agent:
    """A new user (useradd, a home of its own) that nothing else on this host uses."""
    name = f"initd-atk-{secrets.token_hex(4)}"
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", name], check=True)
    entry = pwd.getpwnam(name)
    return Agent(name, entry.pw_uid, entry.pw_gid, entry.pw_dir)


def remove_agent(agent: Agent) -> None:
    remove_user(agent.name)
    shutil.rmtree(agent.home, ignore_errors=True)


def agent_for_tests(why: str) -> Iterator[Agent]:
    """What an ``agent`` fixture yields: a new agent user, removed afterwards. Without root
    the test is skipped, saying ``why`` it needs root (making a user, booting as root)."""
    if os.geteuid() != 0:
        pytest.skip(why)
    made = make_agent()
    try:
        yield made
    finally:
        remove_agent(made)


def workspace_for_tests(agent: Agent, *, forget_state: bool = False) -> Iterator[Path]:
    """What a ``ws`` fixture yields: a fresh workspace of ``agent``'s, removed afterwards,
    and with ``forget_state`` the agent's ~/.discobot too (initd's memory, such as a dev
    container's done stages: the next test is a new container)."""
    path = workspace(agent)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        if forget_state:
            shutil.rmtree(agent.state, ignore_errors=True)


def as_agent(agent: Agent, script: str, *, timeout: float = 60,
             check: bool = True) -> subprocess.CompletedProcess[str]:
    """``sh -c script`` as the agent, with its login environment, from its home."""
    env = {**GIT_ENV, "HOME": agent.home, "USER": agent.name, "LOGNAME": agent.name}
    out = subprocess.run(["runuser", "-u", agent.name, "--", "sh", "-c", script],
                         capture_output=True, text=True, timeout=timeout, env=env,
                         cwd=agent.home)
    if check:
        assert out.returncode == 0, f"as {agent.name}: {script}\n{out.stdout}{out.stderr}"
    return out


class Canary:
    """A root-only 0700 directory holding a root 0600 secret, a root 0644 file and a root
    subdirectory: what an attack through root would reach. ``changes()`` lists whatever
    differs from when it was made (owner, mode, content, new or missing entries)."""

    def __init__(self, base: str | None = None, files: dict[str, str] | None = None) -> None:
        # ``base``: a directory on the file system a hard link must share (the agent's home's)
        self.dir = Path(tempfile.mkdtemp(prefix="initd-canary-", dir=base))  # 0700, root's
        self.token = secrets.token_hex(16)
        self.secret = self.dir / "secret"
        self.secret.write_text(f'{{"hooks": {{"x": {{"token": "{self.token}"}}}}}}\n')
        self.secret.chmod(0o600)
        self.victim = self.dir / "victim"
        self.victim.write_text("root's own file\n")
        self.victim.chmod(0o644)
        self.sub = self.dir / "sub"
        self.sub.mkdir(mode=0o755)
        for name, text in (files or {}).items():  # more root 0600 files, as a test needs
            (self.dir / name).write_text(text)
            (self.dir / name).chmod(0o600)
        self.before = self._state()

    def _state(self) -> dict[str, tuple[int, int, int, str]]:
        state = {}
        for path in [self.dir, *sorted(self.dir.rglob("*"))]:
            info = path.lstat()
            digest = ""
            if stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            state[str(path)] = (info.st_mode, info.st_uid, info.st_gid, digest)
        return state

    def changes(self) -> list[str]:
        after = self._state()
        found = [f"{path}: {self.before[path]} -> {after[path]}"
                 for path in self.before if path in after and after[path] != self.before[path]]
        found += [f"{path}: gone" for path in self.before if path not in after]
        found += [f"{path}: new" for path in after if path not in self.before]
        return found

    def leaked_into(self, *trees: str | Path) -> list[str]:
        """Files under ``trees`` (the agent's) that hold the secret's token."""
        found = []
        for tree in trees:
            for path in Path(tree).rglob("*"):
                try:
                    if path.is_file() and not path.is_symlink() and \
                            self.token in path.read_text(errors="replace"):
                        found.append(str(path))
                except OSError:
                    continue
        return found

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def workspace(agent: Agent, hooks: bool = True) -> Path:
    """A git repository the agent owns (with a committer identity), outside any home."""
    path = Path(tempfile.mkdtemp(prefix="initd-atk-ws-"))
    os.chmod(path, 0o755)
    os.chown(path, agent.uid, agent.gid)
    as_agent(agent, f"cd {path} && git init -q && git config user.email a@example.com "
                    "&& git config user.name Agent")
    if hooks:
        as_agent(agent, f"mkdir -p {path}/.discobot/hooks")
    return path


def hook(directory: Path, filename: str, body: str, owner: Agent | None = None,
         **fields: object) -> Path:
    """A discobot hook file: a shebang, front matter, a body; owned by ``owner``."""
    import json

    front = "".join(f"# {key}: {json.dumps(value)}\n" for key, value in fields.items())
    path = directory / filename
    path.write_text(f"#!/bin/sh\n#---\n{front}#---\n{body}\n")
    path.chmod(0o755)
    if owner is not None:
        os.chown(path, owner.uid, owner.gid)
    return path


def empty_dir() -> str:
    """An image hooks directory with nothing in it (so /etc/initd/hooks.d is not read)."""
    return tempfile.mkdtemp(prefix="initd-atk-image-")


def boot_args(agent: Agent, ws: Path, sid: str, image: str, *more: str) -> list[str]:
    return ["-v", "--log-format", "json", "--user", agent.name, "--workspace", str(ws),
            "--session-id", sid, "--hooks-dir", image, *more]


def agent_script(body: str) -> str:
    """A Python script the agent can run (a 0755 directory, a 0644 file), for CMD."""
    import textwrap

    directory = tempfile.mkdtemp(prefix="initd-atk-script-")
    os.chmod(directory, 0o755)
    path = os.path.join(directory, "attack.py")
    Path(path).write_text(textwrap.dedent(body))
    os.chmod(path, 0o644)
    return path


def root_record() -> Path:
    """A root-only directory where root hooks write what they ran (the agent cannot)."""
    return Path(tempfile.mkdtemp(prefix="initd-atk-record-"))
