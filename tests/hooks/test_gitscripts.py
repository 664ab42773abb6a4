"""The scripts git runs for initd (initd/hooks/gitscripts.py): the pre-commit chain (the
repository's own hook, then each hook in order, stopping at the first failure; every path,
id and name quoted, a comment never ended by a name) and the overlay's forwarders."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from initd.hooks import gitscripts
from initd.hooks.gitrepo import Repo
from initd.hooks.model import Hook
from tests.hooks.support import git_repo

HOSTILE = "a$(touch pwned)`touch pwned`;'\"\nerror: forged"


def hook(folder: Path, name: str, body: str) -> Hook:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return Hook(id=f"id-{name}", name=name, type="pre-commit", path=str(path),
                directory=str(folder))


def run(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    path = cwd / "pre-commit"
    path.write_text(script)
    path.chmod(0o755)
    return subprocess.run([str(path)], capture_output=True, text=True, timeout=60,
                          cwd=cwd, env={"PATH": "/usr/bin:/bin", **env})


def test_the_chain_runs_the_hooks_in_order_and_stops_at_a_failure(tmp_path: Path) -> None:
    repo = Repo(str(git_repo(tmp_path / "ws")))
    log = tmp_path / "log"
    hooks = [hook(tmp_path / "h", "10-a", f"echo a >> {log}"),
             hook(tmp_path / "h", "20-b", f"echo b >> {log}; exit 3"),
             hook(tmp_path / "h", "30-c", f"echo c >> {log}")]
    own = tmp_path / "own"
    hook(own, "pre-commit", f"echo own >> {log}")
    script = gitscripts.chain(repo, hooks, own=f"'{own}'", session_id="s1",
                              initd=str(tmp_path / "no-initd"), secrets=("TOKEN",))
    done = run(script, tmp_path, TOKEN="hidden")
    assert done.returncode == 3 and log.read_text() == "own\na\nb\n"
    assert "pre-commit hook 20-b failed with exit code 3" in done.stderr


def test_nothing_the_workspace_names_is_shell_code(tmp_path: Path) -> None:
    ws = git_repo(tmp_path / "ws")
    repo = Repo(str(ws))
    odd = hook(tmp_path / "h", "10-x", 'printf "%s|%s|%s" "$DISCOBOT_SESSION_ID" '
               '"${TOKEN-unset}" "$DISCOBOT_HOOK_TYPE" > out')
    odd = odd._replace(id=HOSTILE, name=HOSTILE)
    script = gitscripts.chain(repo, [odd], own="", session_id=HOSTILE,
                              initd=str(tmp_path / "no-initd"), secrets=("TOKEN",))
    listed = [line for line in script.splitlines() if line.startswith("#   a$(touch")]
    assert len(listed) == 1 and "?error: forged" in listed[0]  # a name ends no comment
    done = run(script, tmp_path, TOKEN="hidden")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out").read_text() == f"{HOSTILE}|unset|pre-commit"
    assert not (tmp_path / "pwned").exists() and not (ws / "pwned").exists()


def test_the_chain_is_the_same_bytes_when_nothing_changed(tmp_path: Path) -> None:
    repo = Repo(str(git_repo(tmp_path / "ws")))
    hooks = [hook(tmp_path / "h", "10-a", "true")]
    made = [gitscripts.chain(repo, hooks, own="", session_id="s", initd="/i")
            for _ in range(2)]
    assert made[0] == made[1] and gitscripts.MARKER in made[0]
    for fingerprint in ("# husky", "LEFTHOOK", "ID: 138fd403232d2ddd5efb44317e38bf03"):
        assert fingerprint not in made[0]  # no manager takes it for its own
    empty = gitscripts.chain(repo, [], own="", session_id="s", initd="/i")
    assert "(none yet" in empty and run(empty, tmp_path).returncode == 0


def test_a_forwarder_runs_the_hook_it_stands_for_in_place(tmp_path: Path) -> None:
    previous = tmp_path / "it's here"
    hook(previous, "commit-msg", 'echo "$0 $*"; exit 4')
    script = gitscripts.forwarder(str(previous), "commit-msg")
    done = run(script, tmp_path)
    assert done.returncode == 4 and done.stdout.startswith(f"{previous}/commit-msg")
    assert run(gitscripts.forwarder(str(tmp_path / "none"), "x"), tmp_path).returncode == 0


def test_the_initd_the_script_calls_back() -> None:
    found = gitscripts.initd_command()
    assert os.path.isabs(found)
    assert "pre-commit" not in gitscripts.FORWARDED  # (the chain's own)
