"""The managed pre-commit chain, with real git repositories and real commits."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.hooks import precommit
from initd.state import statefile
from tests.hooks.support import GIT_ENV, ROOT_HOME, add_hook, git, git_repo
from tests.support.harness import run, wait_for
from tests.support.users import AGENT

INITD = [sys.executable, "-m", "initd"]


@pytest.fixture
def sid() -> Iterator[str]:
    """A session id of its own; its status tree is removed afterwards."""
    session = f"pc-{uuid.uuid4().hex[:8]}"
    yield session
    for home in {ROOT_HOME, *(p.pw_dir for p in pwd.getpwall()
                              if p.pw_name == AGENT)}:
        shutil.rmtree(os.path.join(home, ".discobot", session), ignore_errors=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "repo")


def hooks_dir(repo: Path) -> Path:
    return repo / ".discobot" / "hooks"


def install(repo: Path, session: str, *more: str) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([*INITD, "precommit", "install", "--workspace", str(repo),
                          "--hooks-dir", str(repo / "no-image-hooks"), "--session-id",
                          session, *more], capture_output=True, text=True, timeout=60)
    return out


def commit(repo: Path, name: str = "f.txt", content: str = "x\n",
           user: str | None = None) -> subprocess.CompletedProcess[str]:
    (repo / name).write_text(content)
    git(repo, "add", name, user=user)
    return git(repo, "commit", "-qm", f"change {name}", user=user)


def trail_hook(repo: Path, filename: str, trail: Path, code: int = 0, **fields: object) -> None:
    add_hook(hooks_dir(repo), filename, f"echo {filename} >> {trail}; echo out-of-{filename};"
             f" exit {code}", type="pre-commit", **fields)


def test_commit_runs_the_hooks_in_order(repo: Path, tmp_path: Path, sid: str) -> None:
    trail = tmp_path / "trail"
    trail_hook(repo, "20-b.sh", trail)
    trail_hook(repo, "10-a.sh", trail)
    add_hook(hooks_dir(repo), "30-session.sh", "exit 9", type="session")  # not pre-commit
    assert install(repo, sid).returncode == 0
    assert commit(repo).returncode == 0
    assert trail.read_text().split() == ["10-a.sh", "20-b.sh"]


def test_failing_hook_fails_the_commit_with_its_output_and_code(repo: Path, tmp_path: Path,
                                                                 sid: str) -> None:
    trail = tmp_path / "trail"
    trail_hook(repo, "10-bad.sh", trail, code=3, name="Bad check")
    trail_hook(repo, "20-never.sh", trail)
    install(repo, sid)
    out = commit(repo)
    assert out.returncode != 0
    assert "out-of-10-bad.sh" in out.stderr
    assert "pre-commit hook 'Bad check' failed with exit code 3" in out.stderr
    assert trail.read_text().split() == ["10-bad.sh"]  # stopped at the first failure
    assert git(repo, "rev-parse", "HEAD").returncode != 0  # nothing was committed
    script = repo / ".git" / "hooks" / "pre-commit"
    direct = subprocess.run([str(script)], cwd=repo, capture_output=True, env=GIT_ENV)
    assert direct.returncode == 3  # the script exits with the hook's own code


def test_status_json_is_updated_by_a_commit(repo: Path, tmp_path: Path, sid: str) -> None:
    trail_hook(repo, "10-a.sh", tmp_path / "trail")
    install(repo, sid)
    assert commit(repo).returncode == 0
    base = Path(ROOT_HOME, ".discobot", sid, "hooks")
    entry = json.loads((base / "status.json").read_text())["hooks"]["10-a"]
    assert (entry["type"], entry["lastResult"], entry["runCount"]) == ("pre-commit",
                                                                       "success", 1)
    assert (base / "output" / "10-a.log").read_text() == "out-of-10-a.sh\n"


def test_existing_hook_is_preserved_and_runs_first(repo: Path, tmp_path: Path,
                                                   sid: str) -> None:
    trail = tmp_path / "trail"
    own = repo / ".git" / "hooks" / "pre-commit"
    own.write_text(f'#!/bin/sh\necho "own $# $(cat)" >> {trail}\nexit ${{OWN_CODE:-0}}\n')
    own.chmod(0o700)
    before = own.read_bytes()
    trail_hook(repo, "10-a.sh", trail)
    assert "moved to" in install(repo, sid).stdout
    assert commit(repo).returncode == 0
    assert trail.read_text().splitlines() == ["own 0 ", "10-a.sh"]
    backup = repo / ".git" / "initd" / "own" / "pre-commit"  # its own name, aside
    assert backup.read_bytes() == before
    # its stdin and arguments reach it; its exit code stops the chain
    script = repo / ".git" / "hooks" / "pre-commit"
    out = subprocess.run([str(script), "arg1"], cwd=repo, input=b"from-stdin",
                         env={**GIT_ENV, "OWN_CODE": "5"}, capture_output=True)
    assert out.returncode == 5
    assert trail.read_text().splitlines()[-1] == "own 1 from-stdin"


def test_reinstall_is_idempotent(repo: Path, tmp_path: Path, sid: str) -> None:
    (repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (repo / ".git" / "hooks" / "pre-commit").chmod(0o755)
    trail_hook(repo, "10-a.sh", tmp_path / "trail")
    install(repo, sid)
    first = (repo / ".git" / "hooks" / "pre-commit").read_bytes()
    backup = (repo / ".git" / "initd" / "own" / "pre-commit").read_bytes()
    assert install(repo, sid).returncode == 0
    assert (repo / ".git" / "hooks" / "pre-commit").read_bytes() == first
    assert (repo / ".git" / "initd" / "own" / "pre-commit").read_bytes() == backup


def test_an_own_hook_written_over_the_chain_is_taken_over_and_the_older_kept(
        repo: Path, tmp_path: Path, sid: str) -> None:
    """A tool that writes its hook over the chain (simple-git-hooks does) while an own
    hook is kept: the new one runs first from the next install; the older one, which that
    tool discarded, is kept (never overwritten), not run, and said so."""
    trail = tmp_path / "trail"
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-commit").write_text(f"#!/bin/sh\necho older >> {trail}\n")
    (hooks / "pre-commit").chmod(0o755)
    trail_hook(repo, "10-a.sh", trail)
    assert install(repo, sid).returncode == 0
    (hooks / "pre-commit").write_text(f"#!/bin/sh\necho newer >> {trail}\n")
    out = install(repo, sid)
    assert out.returncode == 0, out.stderr
    assert "kept, not run" in out.stdout
    assert commit(repo).returncode == 0
    assert trail.read_text().split() == ["newer", "10-a.sh"]
    kept = repo / ".git" / "initd" / "pre-commit.replaced"
    assert kept.read_text() == f"#!/bin/sh\necho older >> {trail}\n"


def test_a_backup_of_an_earlier_initd_becomes_the_own_hook(repo: Path, tmp_path: Path,
                                                           sid: str) -> None:
    """initd used to keep the own hook as pre-commit.original beside its chain."""
    trail = tmp_path / "trail"
    trail_hook(repo, "10-a.sh", trail)
    install(repo, sid)
    original = repo / ".git" / "hooks" / "pre-commit.original"
    original.write_text(f"#!/bin/sh\necho \"$(basename \"$0\")\" >> {trail}\n")
    original.chmod(0o755)
    assert install(repo, sid).returncode == 0
    assert not original.exists()
    assert commit(repo).returncode == 0
    assert trail.read_text().split() == ["pre-commit", "10-a.sh"]


def test_uninstall_restores_the_original_exactly(repo: Path, sid: str) -> None:
    own = repo / ".git" / "hooks" / "pre-commit"
    own.write_bytes(b"#!/bin/sh\n# \xff odd bytes\nexit 0\n")
    own.chmod(0o741)
    install(repo, sid)
    assert precommit.is_managed(str(own))
    out = subprocess.run([*INITD, "precommit", "uninstall", "--workspace", str(repo)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert own.read_bytes() == b"#!/bin/sh\n# \xff odd bytes\nexit 0\n"
    assert stat.S_IMODE(own.stat().st_mode) == 0o741
    assert not (repo / ".git" / "initd").exists()


def test_uninstall_without_original_removes_the_script(repo: Path, sid: str) -> None:
    install(repo, sid)
    subprocess.run([*INITD, "precommit", "uninstall", "--workspace", str(repo)], check=True,
                   capture_output=True)
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()


@pytest.mark.parametrize("absolute", [False, True], ids=["relative", "absolute"])
def test_a_core_hooks_path_is_overlaid_and_put_back(repo: Path, tmp_path: Path, sid: str,
                                                    absolute: bool) -> None:
    """core.hooksPath set (a committed .githooks, a shared directory): initd writes nothing
    there; the repository's core.hooksPath names initd's overlay, which runs that
    directory's hooks in place (pre-commit first, the others forwarded), and uninstall
    puts the setting back exactly."""
    target = tmp_path / "shared-hooks" if absolute else repo / ".githooks"
    target.mkdir()
    trail = tmp_path / "trail"
    for name in ("pre-commit", "commit-msg"):
        (target / name).write_text(f'#!/bin/sh\necho "$(basename "$0")" >> {trail}\n')
        (target / name).chmod(0o755)
    value = str(target) if absolute else ".githooks"
    git(repo, "config", "core.hooksPath", value)
    config = (repo / ".git" / "config").read_bytes()
    listing = sorted(os.listdir(target))
    trail_hook(repo, "10-a.sh", trail)
    out = install(repo, sid)
    assert out.returncode == 0, out.stderr
    assert "core.hooksPath" in out.stdout
    overlay = repo / ".git" / "initd" / "hooks"
    assert git(repo, "config", "core.hooksPath").stdout.strip() == str(overlay)
    assert commit(repo, "tracked.txt").returncode == 0
    assert trail.read_text().split() == ["pre-commit", "10-a.sh", "commit-msg"]
    assert sorted(os.listdir(target)) == listing
    assert install(repo, sid).returncode == 0  # again: the overlay is refreshed, kept
    out = subprocess.run([*INITD, "precommit", "uninstall", "--workspace", str(repo)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert (repo / ".git" / "config").read_bytes() == config
    assert not (repo / ".git" / "initd").exists()


def test_a_linked_worktree_commit_runs_the_hooks(repo: Path, tmp_path: Path, sid: str) -> None:
    trail = tmp_path / "trail"
    trail_hook(repo, "10-a.sh", trail)
    assert commit(repo, "first.txt").returncode == 0  # a HEAD to branch from
    install(repo, sid)
    worktree = tmp_path / "wt"
    assert git(repo, "worktree", "add", "-q", str(worktree), "-b", "feature").returncode == 0
    assert commit(worktree, "second.txt").returncode == 0
    assert trail.read_text().split() == ["10-a.sh"]


def test_a_repository_with_no_head_yet(repo: Path, tmp_path: Path, sid: str) -> None:
    trail = tmp_path / "trail"
    trail_hook(repo, "10-a.sh", trail)
    assert install(repo, sid).returncode == 0
    assert git(repo, "rev-parse", "HEAD").returncode != 0
    assert commit(repo).returncode == 0
    assert trail.read_text().split() == ["10-a.sh"]


@pytest.mark.parametrize("name", ['a"$(touch CANARY)"b', "it's `touch CANARY` time",
                                  "spaces  and $HOME and \\ back", "new\nline; touch CANARY"])
def test_hostile_names_run_no_command(repo: Path, tmp_path: Path, sid: str, name: str) -> None:
    trail = tmp_path / "trail"
    trail_hook(repo, "10-a.sh", trail, name=name)
    trail_hook(repo, "20-b.sh", trail, code=1, name=name)
    install(repo, sid)
    out = commit(repo)
    assert out.returncode != 0
    assert f"pre-commit hook {name!r} failed" in out.stderr  # repr: no forged lines
    assert trail.read_text().split() == ["10-a.sh", "20-b.sh"]
    assert not list(repo.rglob("CANARY")) and not list(tmp_path.rglob("CANARY"))


def test_zero_hooks_installs_a_chain_that_later_hooks_join(repo: Path, tmp_path: Path,
                                                           sid: str) -> None:
    install(repo, sid)
    assert commit(repo, "a.txt").returncode == 0
    trail = tmp_path / "trail"
    trail_hook(repo, "10-a.sh", trail)
    install(repo, sid)  # what every boot does
    assert commit(repo, "b.txt").returncode == 0
    assert trail.read_text().split() == ["10-a.sh"]


def test_the_commit_still_works_when_initd_is_out_of_reach(repo: Path, tmp_path: Path,
                                                           sid: str) -> None:
    trail = tmp_path / "trail"
    trail_hook(repo, "10-a.sh", trail)
    trail_hook(repo, "20-b.sh", trail, code=4, name="B")
    install(repo, sid)
    script = repo / ".git" / "hooks" / "pre-commit"
    script.write_text(script.read_text().replace(
        f"initd={precommit.initd_command()}", "initd=/nonexistent/initd"))
    out = commit(repo)
    assert out.returncode != 0
    assert "pre-commit hook B failed with exit code 4" in out.stderr
    assert "out-of-20-b.sh" in out.stderr
    assert trail.read_text().split() == ["10-a.sh", "20-b.sh"]


def trusted(gitconfig: Path) -> list[str]:
    out = subprocess.run(["git", "config", "--file", str(gitconfig), "--get-all",
                          "safe.directory"], capture_output=True, text=True, env=GIT_ENV)
    return out.stdout.split()


def test_agent_user_commits_in_a_root_created_workspace(agent_user: pwd.struct_passwd,
                                                        sid: str) -> None:
    """Root creates the repository (as an image build or a clone as root would); the agent
    commits: git's dubious-ownership check is satisfied for this path only."""
    ws = Path(tempfile.mkdtemp(prefix="initd-pc-"))
    gitconfig = Path(agent_user.pw_dir, ".gitconfig")
    try:
        git(ws, "init", "-q")
        trail = ws / "trail"
        add_hook(hooks_dir(ws), "10-who.sh", f"id -un >> {trail}", type="pre-commit")
        subprocess.run(["chmod", "-R", "a+rwX", str(ws)], check=True)
        assert "dubious ownership" in git(ws, "status", user=agent_user.pw_name).stderr
        out = install(ws, sid, "--user", agent_user.pw_name)
        assert out.returncode == 0, out.stderr
        assert trusted(gitconfig) == [str(ws)]
        assert gitconfig.stat().st_uid == agent_user.pw_uid
        for key, value in (("user.email", "agent@example.com"), ("user.name", "Agent")):
            git(ws, "config", key, value, user=agent_user.pw_name)
        out = commit(ws, user=agent_user.pw_name)
        assert out.returncode == 0, out.stderr
        assert trail.read_text().split() == [agent_user.pw_name]
        install(ws, sid, "--user", agent_user.pw_name)  # once only in ~/.gitconfig
        assert trusted(gitconfig) == [str(ws)]
    finally:
        shutil.rmtree(ws, ignore_errors=True)
        gitconfig.unlink(missing_ok=True)


def test_boot_installs_the_chain_and_the_opt_out_is_honoured(repo: Path, tmp_path: Path,
                                                             sid: str) -> None:
    trail_hook(repo, "10-a.sh", tmp_path / "trail")
    args = ["--workspace", str(repo), "--hooks-dir", str(tmp_path / "none"), "--session-id",
            sid, "--", "true"]
    off = run(args, env={**os.environ, "INITD_PRECOMMIT": "0"})
    assert off.code == 0
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    on = run(args)
    assert on.code == 0, on.stderr
    assert precommit.is_managed(str(repo / ".git" / "hooks" / "pre-commit"))


def test_the_stop_while_boots_git_waits_on_a_fifo_never_starts_the_agent(
        initd, repo: Path, tmp_path: Path, sid: str) -> None:  # type: ignore[no-untyped-def]
    """A FIFO as .git/config (the agent can plant one on a volume) holds git; the stop
    signal stops that git at once and ends the boot with 128+15, as during the session
    hooks. Once each of boot's git calls held the stop for its whole 30 s timeout."""
    (repo / ".git" / "config").unlink()
    os.mkfifo(repo / ".git" / "config")
    ran = tmp_path / "agent-ran"
    init = initd(["--workspace", str(repo), "--hooks-dir", str(tmp_path / "none"),
                  "--session-id", sid, "--", "touch", str(ran)])
    wait_for(lambda: any(p.name() == "git" for p in init.descendants()), timeout=30,
             what="boot's git, waiting on the FIFO")
    init.signal(signal.SIGTERM)
    assert init.wait(timeout=20) == 128 + signal.SIGTERM, init.stderr[-3000:]
    assert not ran.exists()


def test_script_and_backup_belong_to_the_repository_owner(repo: Path, sid: str) -> None:
    """Installed by root into a repository the agent owns: the agent keeps owning it all."""
    own = repo / ".git" / "hooks" / "pre-commit"
    own.write_text("#!/bin/sh\nexit 0\n")
    own.chmod(0o755)
    subprocess.run(["chown", "-R", "65534:65534", str(repo / ".git")], check=True)
    assert install(repo, sid).returncode == 0
    for path in (own, repo / ".git" / "initd" / "own" / "pre-commit"):
        assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534), path
    assert precommit.is_managed(str(own))


def test_a_commit_does_not_recover_a_hook_that_is_really_running(repo: Path, tmp_path: Path,
                                                                 sid: str) -> None:
    """A background session hook still running: a commit meanwhile must leave it running."""
    from initd.hooks.model import Hook
    from initd.hooks.status.store import StatusStore

    store = StatusStore.for_session(statefile.root(ROOT_HOME, None), sid)
    store.started(Hook(id="warm", name="Warm", type="session", path="/x", directory="/"))
    trail_hook(repo, "10-a.sh", tmp_path / "trail")
    install(repo, sid)
    assert commit(repo).returncode == 0
    assert store.read()["hooks"]["warm"]["lastResult"] == "running"


def test_boot_leaves_a_plain_checkout_alone(repo: Path, tmp_path: Path, sid: str) -> None:
    """`initd -- cmd` run tini-style inside some git checkout must not rewrite its hooks:
    only an explicit workspace, or one with .discobot/hooks, gets the chain."""
    plain = run(["--hooks-dir", str(tmp_path / "none"), "--session-id", sid, "--", "true"],
                cwd=str(repo))
    assert plain.code == 0
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    (repo / ".discobot" / "hooks").mkdir(parents=True)
    with_hooks = run(["--hooks-dir", str(tmp_path / "none"), "--session-id", sid, "--",
                      "true"], cwd=str(repo))
    assert with_hooks.code == 0
    assert precommit.is_managed(str(repo / ".git" / "hooks" / "pre-commit"))


def test_trusting_keeps_the_agents_own_gitconfig_its_own(agent_user: pwd.struct_passwd,
                                                          sid: str) -> None:
    """git rewrites a config file by renaming a lock file over it: written by root, the
    agent's ~/.gitconfig became root's (and 0644), and the agent could no longer change
    its own settings."""
    ws = Path(tempfile.mkdtemp(prefix="initd-pc-"))
    gitconfig = Path(agent_user.pw_dir, ".gitconfig")
    try:
        git(ws, "init", "-q")
        subprocess.run(["chmod", "-R", "a+rwX", str(ws)], check=True)
        out = subprocess.run(["runuser", "-u", agent_user.pw_name, "--", "git", "config",
                              "--global", "user.name", "Agent Smith"], capture_output=True)
        assert out.returncode == 0, out.stderr
        gitconfig.chmod(0o600)
        assert install(ws, sid, "--user", agent_user.pw_name).returncode == 0
        assert trusted(gitconfig) == [str(ws)]
        info = gitconfig.stat()
        assert (info.st_uid, info.st_gid) == (agent_user.pw_uid, agent_user.pw_gid)
        assert stat.S_IMODE(info.st_mode) == 0o600
        out = subprocess.run(["runuser", "-u", agent_user.pw_name, "--", "git", "config",
                              "--global", "user.email", "agent@example.com"],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr  # still the agent's to change
        assert "Agent Smith" in gitconfig.read_text()
    finally:
        shutil.rmtree(ws, ignore_errors=True)
        gitconfig.unlink(missing_ok=True)
