"""initd's managed pre-commit chain beside the git hook managers projects already use,
each the real tool, pinned, installed by its own command: husky 9.1.7 and 4.3.8, lefthook
2.2.2, simple-git-hooks 2.14.0 (npm) and the pre-commit framework 4.5.1 (PyPI); and two
set-ups with no tool, a committed ``.githooks/`` named by ``core.hooksPath`` in the work
tree and a ``core.hooksPath`` in ``~/.gitconfig``. (tests/support/hookmanagers.py sets
them up; the packages are installed once per session into a temporary directory.)

The contract, each case citing the documented tool behaviour it relies on:

* The repository's own hook (the manager's) runs first, under its own name, then initd's
  hooks; a failing manager hook fails the commit, and so does a failing initd hook.
* ``core.hooksPath`` set in the work tree or globally: the chain still works.
* Nothing tracked is modified: ``git status`` stays clean after every install and commit.
* The manager's install and initd's run in any order, any number of times, and both stay
  in force (or initd says in one line which one won and why).
* ``initd precommit uninstall`` restores everything byte for byte: hook files, their
  modes, git config.

Where the cases cite, by key:

[git-hookspath] git-config(1) core.hooksPath / githooks(5), as quoted in
  evilmartians/lefthook#170: "By default the hooks directory is $GIT_DIR/hooks, but that
  can be changed via the core.hooksPath configuration variable"; git's own
  t/t1350-config-hooks-path.sh runs the hooksPath hook instead of .git/hooks'.
[husky9] typicode.github.io/husky/get-started.html: "The init command ... creates a
  pre-commit script in .husky/ and updates the prepare script in package.json"; husky
  9.1.7's index.js runs ``git config core.hooksPath .husky/_``, writes ``.husky/_/.gitignore``
  (``*``) and one stub per hook, ``. "$(dirname "$0")/h"``; its ``h`` does
  ``n=$(basename "$0")``, ``s=$(dirname "$(dirname "$0")")/$n``, ``[ ! -f "$s" ] && exit 0``:
  a stub run under another name runs nothing and exits 0.
[husky4] husky 4.3.8's README: "Existing hooks are kept."; "Reinstall: If Husky is already
  in your node_modules ... you can run npm rebuild"; "By default, Husky won't install on CI
  servers." Its sh/husky.sh: ``hookName="$(basename "$0")"``, and exits 0 when
  package.json does not name that hook ("config not found, skipping hook").
[lefthook] lefthook.dev/usage/commands/install.html: "Installs configured hooks to Git
  hooks. NPM package lefthook installs the hooks in a postinstall script automatically."
  evilmartians/lefthook#1292 (2.x): "lefthook install fail[s] and warn[s] loudly when
  either the local or global core.hooksPath is set". Run here, 2.2.2 prints "Renamed
  .git/hooks/pre-commit to .git/hooks/pre-commit.old" and never runs the .old hook.
[sgh] simple-git-hooks 2.14.0's README: "Run `npx simple-git-hooks`"; "Add to scripts for
  auto-install: { "prepare": "simple-git-hooks" }". Its simple-git-hooks.js ``_setHook``
  writes the prologue plus the command over the hook file (``fs.writeFileSync``), in the
  directory of ``git config --local core.hooksPath`` or .git/hooks.
[pre-commit] pre-commit.com, "Running in migration mode": "By default, if you have existing
  hooks pre-commit install will install in a migration mode which runs both your existing
  hooks and hooks for pre-commit ... pre-commit uninstall will restore your hooks to the
  state prior to installation." pre-commit/pre-commit#718 "Refuse to install with
  core.hooksPath set" ("Cowardly refusing to install hooks with `core.hooksPath` set.").
  hook_impl._run_legacy runs ``<hook-dir>/pre-commit.legacy`` first, with
  PRE_COMMIT_RUNNING_LEGACY=1, and stops with "bug: pre-commit's script is installed in
  migration mode" when that hook runs pre-commit's script again.
[npm-prepare] docs.npmjs.com/cli/v11/using-npm/scripts: prepare "Runs on local npm install
  without package arguments"; dependencies' install/postinstall scripts run when npm
  installs them (npm install in a fresh clone).
[initd] docs/discobot-hooks.md, "The pre-commit chain": the script "runs the
  repository's own hook first, then each pre-commit hook in file-name order, and stops at
  the first failure";
  "initd precommit uninstall ... pre-commit.original goes back, byte for byte".
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hooks.support import forget_session
from tests.support import harness
from tests.support.hookmanagers import (
    MANAGERS,
    NPM_MANAGERS,
    Manager,
    Toolchain,
    ToolUnavailable,
    Workspace,
    diff_snapshots,
    run,
    shown,
)

# the session's first case of a tool installs it (npm, pip): the installs are made once, in
# one worker; `make check` leaves these out
pytestmark = [pytest.mark.timeout(600), pytest.mark.xdist_group("hook-managers"),
              pytest.mark.slow]

ORDERS = ["manager,initd", "initd,manager", "initd,manager,initd",
          "manager,initd,manager,initd", "initd,manager,initd,manager"]
BY_NAME = {m.name: m for m in MANAGERS}
PATHS = re.compile(r"\S*/\S*")


@pytest.fixture(scope="session")
def toolchain(tmp_path_factory: pytest.TempPathFactory,
              pytestconfig: pytest.Config) -> Toolchain:
    """Installs in the session's temporary directory; the downloads in the repository's
    .pytest_cache (ignored by git), so that later sessions fetch nothing."""
    cache = pytestconfig.rootpath / ".pytest_cache" / "hook-managers"
    cache.mkdir(parents=True, exist_ok=True)
    return Toolchain(tmp_path_factory.mktemp("hook-managers"), cache)


Make = Callable[..., Workspace]


@pytest.fixture
def make(tmp_path: Path, toolchain: Toolchain) -> Make:
    """``make(manager, manager_fails=False, initd_fails=False)``: a built workspace. A
    tool that could not be installed fails the test, saying why (never a skip)."""
    def build(manager: Manager, manager_fails: bool = False,
              initd_fails: bool = False) -> Workspace:
        try:
            return Workspace(tmp_path / "ws", toolchain, manager, manager_fails=manager_fails,
                             initd_fails=initd_fails).build()
        except ToolUnavailable as exc:
            pytest.fail(f"{manager.name} is not available: {exc}", pytrace=False)
    return build


def install_in_order(ws: Workspace, order: str) -> None:
    """Each step of ``order``; after each, nothing tracked or untracked shows in git."""
    for who in order.split(","):
        ws.install(who)
        status = ws.status()
        assert status == "", (f"`git status --porcelain` after {ws.steps()}: {status!r}"
                               f"\n{ws.describe()}")


def initd_said(ws: Workspace) -> list[str]:
    """The lines of initd's install output that name the manager (in words: the paths in
    a line are left out, as a test's own directory may well be named after the tool)."""
    return [line for who, proc in ws.installs if who == "initd"
            for line in (proc.stdout + proc.stderr).splitlines()
            if ws.manager.mentions.search(PATHS.sub("", line))]


def commit_report(ws: Workspace, proc: subprocess.CompletedProcess[str],
                  expected: object) -> str:
    outputs = "\n".join(f"[{who}] {p.stdout.strip()} {p.stderr.strip()}".strip()
                        for who, p in ws.installs)
    return (f"{ws.manager.name}, installs {ws.steps()}: evidence {ws.evidence()}, "
            f"expected {expected}\n{shown(proc)}\n{ws.describe()}\ninstall output:\n"
            f"{outputs}")


def assert_chain(ws: Workspace, order: str) -> None:
    """Commit twice: each time the manager's hook then initd's, each exactly once, the
    commit made, the tree clean. When the manager installed last and documents running an
    existing hook before its own (pre-commit's migration mode), that order is accepted
    too. Or, where the manager installed after initd's last install and one of them is
    out of force, initd said so in one line naming the manager (its install output), and
    the one that won ran once."""
    label = ws.manager.label
    accepted = [[label, "initd"]]
    if order.split(",")[-1] == "manager" and ws.manager.legacy_runs_first:
        accepted.append(["initd", label])
    # Only a manager that installed after initd's last install can have put the chain
    # out of force: initd's next install takes it over (so after it, both run).
    said = initd_said(ws) if order.split(",")[-1] == "manager" else []
    for _ in range(2):
        proc = ws.commit()
        evidence = ws.evidence()
        if evidence not in accepted and said and evidence in ([label], ["initd"]):
            pass  # one won, and initd said which and why
        else:
            assert evidence in accepted, commit_report(ws, proc, accepted)
        assert proc.returncode == 0, commit_report(ws, proc, accepted)
        status = ws.status()
        assert status == "", (f"`git status --porcelain` after commit {ws.commits}: "
                              f"{status!r}")


# --- the chain, in every order ---------------------------------------------------------------

@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("manager", MANAGERS, ids=lambda m: m.name)
def test_both_stay_in_force_in_any_order(make: Make, manager: Manager, order: str) -> None:
    """Installs in ``order`` (each of the manager's by its own command), then a commit:
    the manager's hook, under its own name, then initd's; ``git status`` clean throughout.
    [initd] [git-hookspath] and the manager's own: [husky9] (core.hooksPath=.husky/_; a
    renamed stub runs nothing), [husky4] (keeps an existing hook; stubs read their name),
    [lefthook] (renames an existing hook to .old, refuses with core.hooksPath),
    [sgh] (overwrites), [pre-commit] (moves an existing hook to .legacy and runs it first;
    refuses with core.hooksPath)."""
    ws = make(manager)
    install_in_order(ws, order)
    assert_chain(ws, order)


@pytest.mark.parametrize("order", ["initd,manager", "initd,manager,initd"])
@pytest.mark.parametrize("manager", NPM_MANAGERS, ids=lambda m: m.name)
def test_npm_install_after_boot(make: Make, manager: Manager, order: str) -> None:
    """The agent's ``npm install`` in a fresh clone after initd installed at boot (and the next
    boot's install): npm runs husky 9's and simple-git-hooks' ``prepare``, husky 4's
    ``install`` and lefthook's and simple-git-hooks' ``postinstall``, each of which
    installs the manager again. [npm-prepare] [husky9] [husky4] [lefthook] [sgh]"""
    ws = make(manager)
    install_in_order(ws, order)
    assert_chain(ws, order)


# --- failures fail the commit ------------------------------------------------------------------

@pytest.mark.parametrize("order", ["manager,initd", "initd,manager,initd"])
@pytest.mark.parametrize("manager", MANAGERS, ids=lambda m: m.name)
def test_failing_manager_hook_fails_the_commit(make: Make, manager: Manager, order: str) -> None:
    """The manager's pre-commit hook exits 3: the commit fails, HEAD stays, and initd's
    hooks do not run after it (the chain stops at the first failure). [initd] and the
    manager's citations above: a husky stub renamed ``pre-commit.original`` would exit 0
    without running the hook, and the commit would go through."""
    ws = make(manager, manager_fails=True)
    install_in_order(ws, order)
    head = ws.head()
    proc = ws.commit()
    assert proc.returncode != 0, commit_report(ws, proc, f"[{manager.label}], commit refused")
    assert ws.evidence() == [manager.label], commit_report(ws, proc, [manager.label])
    assert ws.head() == head
    assert ws.status() == "M  work.txt\n"


@pytest.mark.parametrize("order", ["manager,initd", "initd,manager,initd"])
@pytest.mark.parametrize("manager", MANAGERS, ids=lambda m: m.name)
def test_failing_initd_hook_fails_the_commit(make: Make, manager: Manager, order: str) -> None:
    """initd's pre-commit hook exits 4 after the manager's passed: the commit fails and
    HEAD stays. [initd]"""
    ws = make(manager, initd_fails=True)
    install_in_order(ws, order)
    head = ws.head()
    proc = ws.commit()
    expected = [manager.label, "initd"]
    assert proc.returncode != 0, commit_report(ws, proc, f"{expected}, commit refused")
    assert ws.evidence() == expected, commit_report(ws, proc, expected)
    assert ws.head() == head
    assert ws.status() == "M  work.txt\n"


# --- uninstall -------------------------------------------------------------------------------

@pytest.mark.parametrize("order", ["manager,initd,manager,initd", "initd,manager"])
@pytest.mark.parametrize("manager", MANAGERS, ids=lambda m: m.name)
def test_uninstall_restores_bytes(make: Make, manager: Manager, order: str) -> None:
    """After ``order`` and ``initd precommit uninstall``, every hook file (bytes, mode),
    .git/config, .git/info and the HOME's files are exactly what the manager's install
    alone makes in the same workspace (built again at the same paths), and a commit runs
    the manager's hook alone. After "initd,manager" that means initd also takes away its
    script where the manager put it aside (lefthook's pre-commit.old, pre-commit's
    pre-commit.legacy) and leaves the manager's hook in place (husky 4 keeps an existing
    hook, so it never wrote its own pre-commit). [initd] [lefthook] [husky4] [pre-commit]
    ("pre-commit uninstall will restore your hooks to the state prior to installation":
    what a well-behaved chain does)."""
    ws = make(manager)
    ws.install("manager")
    reference = ws.snapshot()
    ws.reset()
    install_in_order(ws, order)
    proc = ws.initd("uninstall")
    assert proc.returncode == 0, f"{shown(proc)}\n{ws.describe()}"
    differences = diff_snapshots(reference, ws.snapshot())
    assert differences == [], (f"{manager.name}, {order} then uninstall: not what "
                               f"{manager.name} alone leaves\n" + "\n".join(differences))
    assert ws.status() == ""
    proc = ws.commit()
    assert proc.returncode == 0 and ws.evidence() == [manager.label], (
        commit_report(ws, proc, [manager.label]))


# --- the tools' own behaviour, which the cases above rely on (initd not involved) -------

@pytest.mark.parametrize("name", ["husky9", "husky4"])
def test_fact_husky_stub_renamed_runs_nothing(make: Make, name: str) -> None:
    """husky's stub under its own name runs the hook; the same bytes named
    ``pre-commit.original`` run nothing and exit 0. [husky9] [husky4]"""
    ws = make(BY_NAME[name])
    ws.install("manager")
    stub_dir = ws.repo / (".husky/_" if name == "husky9" else ".git/hooks")
    renamed = stub_dir / "pre-commit.original"
    renamed.write_bytes((stub_dir / "pre-commit").read_bytes())
    renamed.chmod(0o755)
    proc = run([str(renamed)], ws.repo, ws.env)
    assert (proc.returncode, ws.evidence()) == (0, []), shown(proc)
    proc = run([str(stub_dir / "pre-commit")], ws.repo, ws.env)
    assert (proc.returncode, ws.evidence()) == (0, [name]), shown(proc)


@pytest.mark.parametrize("name", ["lefthook", "pre-commit"])
def test_fact_refuses_to_install_with_core_hookspath(make: Make, name: str) -> None:
    """lefthook 2.x and pre-commit refuse to install while core.hooksPath is set: a chain
    that sets it would lock them out. [lefthook] [pre-commit]"""
    ws = make(BY_NAME[name])
    ws.git_ok("config", "core.hooksPath", ".githooks")
    proc = BY_NAME[name].install(ws)
    assert proc.returncode != 0, shown(proc)
    assert "core.hooksPath" in proc.stdout + proc.stderr, shown(proc)


def test_fact_pre_commit_migration_mode(make: Make) -> None:
    """``pre-commit install`` over an existing hook moves it to ``pre-commit.legacy`` and
    runs it first, under that name. [pre-commit]"""
    ws = make(BY_NAME["pre-commit"])
    own = ws.repo / ".git" / "hooks" / "pre-commit"
    own.write_text(f'#!/bin/sh\necho "own:$(basename "$0")" >> {ws.evidence_file}\n')
    own.chmod(0o755)
    proc = ws.install("manager")
    assert "migration mode" in proc.stdout, shown(proc)
    assert ws.commit().returncode == 0
    assert ws.evidence() == ["own:pre-commit.legacy", "pre-commit"]


def test_fact_lefthook_renames_to_old_and_skips_it(make: Make) -> None:
    """``lefthook install`` renames a hook that is not its own to ``pre-commit.old``, and
    its hook never runs it. [lefthook]"""
    ws = make(BY_NAME["lefthook"])
    own = ws.repo / ".git" / "hooks" / "pre-commit"
    own.write_text(f"#!/bin/sh\necho own >> {ws.evidence_file}\n")
    own.chmod(0o755)
    proc = ws.install("manager")
    assert (ws.repo / ".git" / "hooks" / "pre-commit.old").exists(), shown(proc)
    assert ws.commit().returncode == 0
    assert ws.evidence() == ["lefthook"]


def test_fact_simple_git_hooks_overwrites(make: Make) -> None:
    """``simple-git-hooks`` writes its hook over an existing one, keeping no copy. [sgh]"""
    ws = make(BY_NAME["simple-git-hooks"])
    hooks = ws.repo / ".git" / "hooks"
    (hooks / "pre-commit").write_text(f"#!/bin/sh\necho own >> {ws.evidence_file}\n")
    (hooks / "pre-commit").chmod(0o755)
    ws.install("manager")
    assert sorted(p.name for p in hooks.iterdir() if p.name.startswith("pre-commit")
                  and not p.name.endswith(".sample")) == ["pre-commit"]
    assert ws.commit().returncode == 0
    assert ws.evidence() == ["simple-git-hooks"]


def test_fact_npm_install_reruns_husky(make: Make) -> None:
    """``npm install`` with node_modules in place re-runs the project's ``prepare``:
    husky 9 sets core.hooksPath again after someone unset it. [npm-prepare] [husky9]"""
    ws = make(BY_NAME["husky9"])
    ws.install("manager")
    ws.git_ok("config", "--unset-all", "core.hooksPath")
    proc = run(["npm", "install", "--offline"], ws.repo, ws.env)
    assert proc.returncode == 0, shown(proc)
    assert ws.git_ok("config", "core.hooksPath").strip() == ".husky/_"


# --- what root leaves in the agent's repository ------------------------------------------

def owned_by_others(top: Path, uid: int) -> list[str]:
    """Every name under ``top`` (itself included, no link followed) that is not ``uid``'s."""
    found = []
    for base, dirs, files in os.walk(top):
        for name in [".", *dirs, *files]:
            info = os.lstat(os.path.join(base, name))
            if info.st_uid != uid:
                found.append(f"{os.path.join(base, name)} (uid {info.st_uid})")
    return found


@pytest.mark.parametrize("manager", MANAGERS, ids=lambda m: m.name)
def test_a_boot_leaves_nothing_of_roots_in_the_agents_repository(
        toolchain: Toolchain, manager: Manager, agent_user: pwd.struct_passwd) -> None:
    """The repository is the agent's (its clone, its manager installed), and initd boots as
    root with ``--user``: whatever the install makes there (the chain, .git/initd, the
    own hook's directory and the links to its siblings, an overlay) is the agent's, as
    the rest is. After husky 4's install, 18 links in .git/initd/own were root's."""
    top = Path(tempfile.mkdtemp(prefix="initd-hm-owner-"))
    top.chmod(0o755)  # (the agent's git must reach the repository)
    sid = f"hm-{uuid.uuid4().hex[:8]}"
    try:
        try:
            ws = Workspace(top, toolchain, manager).build()
        except ToolUnavailable as exc:
            pytest.fail(f"{manager.name} is not available: {exc}", pytrace=False)
        ws.install("manager")
        # node_modules is hard links to the session's own copy: not the agent's to have
        shutil.rmtree(ws.repo / "node_modules", ignore_errors=True)
        subprocess.run(["chown", "-R", f"{agent_user.pw_uid}:{agent_user.pw_gid}",
                        str(ws.repo)], check=True)
        assert owned_by_others(ws.repo, agent_user.pw_uid) == []
        init = harness.run(["-v", "--user", agent_user.pw_name, "--workspace", str(ws.repo),
                            "--hooks-dir", str(top / "no-image-hooks"), "--session-id", sid,
                            "--", "true"], timeout=60)
        assert init.code == 0, init.stderr[-3000:]
        said = "\n".join([*init.stdout_lines, init.stderr])
        assert '"event": "pre-commit chain"' in said and "installed" in said, said[-3000:]
        assert owned_by_others(ws.repo, agent_user.pw_uid) == [], ws.describe()
    finally:
        shutil.rmtree(top, ignore_errors=True)
        forget_session(sid, agent_user.pw_dir)
