"""Real git hook managers beside initd's pre-commit chain (tests/conformance/test_hook_managers.py).

Each manager is the real tool, pinned, installed once per test session into a temporary
directory by its own package client (npm for husky 9 and 4, lefthook and simple-git-hooks;
pip, in a virtual environment of its own, for the pre-commit framework). A test's
repository then gets a copy of that tree (hard links) and runs the tool's own install
command, offline. Two more "managers" need no package: a committed ``.githooks/`` that
``git config core.hooksPath .githooks`` points at, and a ``core.hooksPath`` in the
(temporary) HOME's ``~/.gitconfig``.

Every subprocess gets an environment made here from nothing but PATH: a HOME of the test's
own, no ``GIT_*``, no ``CI`` (husky 4 and lefthook's npm postinstall skip their install on
CI servers), npm offline with the session's cache, and an ``INITD_SOCKET`` nothing listens
on.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

VERSIONS = {
    "husky9": "9.1.7",
    "husky4": "4.3.8",
    "lefthook": "2.2.2",
    "simple-git-hooks": "2.14.0",
    "pre-commit": "4.5.1",
}
FIXED_MTIME = 1_600_000_000  # files a test writes get this mtime: lefthook's checksum file
#                             records its config's mtime, and twin repositories must agree
# husky 4 stamps every file it writes with the minute and second it wrote it
# ("#   At: 11/26/2026, 7:50:07 AM"): the one line two installs of it never agree on
HUSKY4_BANNER_TIME = re.compile(rb"(#   At: )[^\n]*")


class ToolUnavailable(Exception):
    """A manager could not be installed for this session (the message says why)."""


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 180,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, input=stdin if stdin is not None else "")


def shown(proc: subprocess.CompletedProcess[str]) -> str:
    """A finished process, as a failure message shows it."""
    cmd = " ".join(shlex.quote(str(a)) for a in proc.args)
    return (f"$ {cmd}\n[exit {proc.returncode}]\n--- stdout ---\n{proc.stdout}"
            f"--- stderr ---\n{proc.stderr}")


class Toolchain:
    """The session's installs: one npm project per npm tool, one venv for pre-commit."""

    def __init__(self, root: Path, cache: Path | None = None) -> None:
        self.root = root
        # the downloads, kept between sessions when ``cache`` is given (the repository's
        # ignored .pytest_cache): a second run fetches nothing
        self.npm_cache = (cache or root) / "npm-cache"
        self.pip_cache = (cache or root) / "pip-cache"
        self.pre_commit_home = root / "pre-commit-home"
        self.socket = str(root / "no-initd.sock")  # nothing listens here
        self._done: dict[str, Path] = {}
        self._failed: dict[str, str] = {}

    def base_env(self, home: Path, *, offline: bool = True) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "TMPDIR": tempfile.gettempdir(),
            "GIT_CONFIG_NOSYSTEM": "1",
            "NO_COLOR": "1",
            "INITD_SOCKET": self.socket,
            "npm_config_cache": str(self.npm_cache),
            "npm_config_audit": "false",
            "npm_config_fund": "false",
            "npm_config_update_notifier": "false",
            # a lockfile that names its tarballs, so that `npm install --offline` finds them
            "npm_config_omit_lockfile_registry_resolved": "false",
            "PRE_COMMIT_HOME": str(self.pre_commit_home),
        }
        if offline:
            env["npm_config_offline"] = "true"
        return env

    @staticmethod
    def network_env() -> dict[str, str]:
        """For the one-time installs only: the caller's proxy and index settings, if any
        (the installs' HOME is not the caller's, so no ~/.npmrc or pip.conf of theirs)."""
        names = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
                 "no_proxy", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CERT",
                 "npm_config_registry", "npm_config_cafile", "SSL_CERT_FILE")
        return {k: os.environ[k] for k in names if k in os.environ}

    def _once(self, key: str, install: Callable[[], Path]) -> Path:
        if key in self._failed:
            raise ToolUnavailable(self._failed[key])
        if key not in self._done:
            try:
                self._done[key] = install()
            except ToolUnavailable as exc:
                self._failed[key] = str(exc)
                raise
        return self._done[key]

    def npm_project(self, key: str, dependencies: dict[str, str]) -> Path:
        """A directory with package.json, package-lock.json and node_modules for these
        pinned devDependencies, installed from the npm registry once per session."""
        def install() -> Path:
            npm = shutil.which("npm")
            if npm is None or shutil.which("node") is None:
                raise ToolUnavailable("node/npm are not installed on this machine "
                                      "(as root: apt-get install -y nodejs npm)")
            project = self.root / "npm" / key
            project.mkdir(parents=True)
            (project / "package.json").write_text(json.dumps(
                {"name": "workspace", "private": True, "devDependencies": dependencies},
                indent=2) + "\n")
            home = self.root / "install-home"
            home.mkdir(exist_ok=True)
            proc = run([npm, "install", "--prefer-offline", "--ignore-scripts", "--no-audit",
                        "--no-fund"],
                       project, {**self.base_env(home, offline=False), **self.network_env()},
                       timeout=300)
            if proc.returncode != 0 or not (project / "node_modules").is_dir():
                raise ToolUnavailable(
                    f"npm could not install {dependencies} from the npm registry (is it "
                    f"reachable from this machine?)\n{shown(proc)}")
            return project
        return self._once(f"npm:{key}", install)

    def pre_commit(self) -> Path:
        """pre-commit, pinned, in a virtual environment of the session's own."""
        def install() -> Path:
            venv = self.root / "pre-commit-venv"
            proc = run([sys.executable, "-m", "venv", str(venv)], self.root,
                       {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, timeout=300)
            if proc.returncode != 0:
                raise ToolUnavailable(f"could not make a venv for pre-commit\n{shown(proc)}")
            pip_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                       "HOME": str(self.root / "install-home"), "PIP_NO_INPUT": "1",
                       "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_CACHE_DIR": str(self.pip_cache),
                       **self.network_env()}
            proc = run([str(venv / "bin" / "pip"), "install", "-q",
                        f"pre-commit=={VERSIONS['pre-commit']}"], self.root, pip_env,
                       timeout=300)
            exe = venv / "bin" / "pre-commit"
            if proc.returncode != 0 or not exe.exists():
                raise ToolUnavailable(
                    f"pip could not install pre-commit=={VERSIONS['pre-commit']} from PyPI "
                    f"(is it reachable from this machine?)\n{shown(proc)}")
            return exe
        return self._once("pip:pre-commit", install)


@dataclass
class Workspace:
    """A test's repository, its HOME and the file every hook appends its name to."""

    root: Path
    toolchain: Toolchain
    manager: Manager
    manager_fails: bool = False
    initd_fails: bool = False
    commits: int = 0
    installs: list[tuple[str, subprocess.CompletedProcess[str]]] = field(default_factory=list)

    @property
    def repo(self) -> Path:
        return self.root / "repo"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def evidence_file(self) -> Path:
        return self.root / "evidence.log"

    @property
    def env(self) -> dict[str, str]:
        return self.toolchain.base_env(self.home)

    # --- set-up ---------------------------------------------------------------------

    def build(self) -> Workspace:
        """The repository with the manager's configuration and initd's pre-commit hook
        committed, nothing installed yet."""
        self.home.mkdir(parents=True)
        (self.home / ".gitconfig").write_text(
            "[user]\n\tname = Agent\n\temail = agent@example.com\n"
            "[init]\n\tdefaultBranch = main\n")
        self.repo.mkdir()
        self.git_ok("init", "-q")
        files = {"README.md": "a workspace\n", "work.txt": "0\n"}
        files.update(self.manager.files(self))
        hook = f"echo initd >> {shlex.quote(str(self.evidence_file))}\n"
        if self.initd_fails:
            hook += "exit 4\n"
        files[".discobot/hooks/50-evidence.sh"] = (
            "#!/bin/sh\n#---\n# type: pre-commit\n#---\n" + hook)
        for rel, text in files.items():
            path = self.repo / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            if rel.startswith((".discobot/hooks/", ".githooks/")):
                path.chmod(0o755)  # git runs hook files only when they are executable
            os.utime(path, (FIXED_MTIME, FIXED_MTIME))
        self.manager.prepare(self)
        self.git_ok("add", "-A")
        self.git_ok("commit", "-q", "--no-verify", "-m", "the workspace")
        return self

    def reset(self) -> Workspace:
        """The same workspace again, from nothing, at the same paths."""
        for path in (self.repo, self.home):
            shutil.rmtree(path, ignore_errors=True)
        self.evidence_file.unlink(missing_ok=True)
        self.commits = 0
        self.installs = []
        return self.build()

    # --- commands -------------------------------------------------------------------

    def git(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run(["git", *args], self.repo, self.env)

    def git_ok(self, *args: str) -> str:
        proc = self.git(*args)
        assert proc.returncode == 0, shown(proc)
        return proc.stdout

    def initd(self, verb: str) -> subprocess.CompletedProcess[str]:
        return run([sys.executable, "-m", "initd", "precommit", verb, "--workspace",
                    str(self.repo)], self.repo, self.env)

    def install(self, who: str) -> subprocess.CompletedProcess[str]:
        """One install step: ``initd`` (must exit 0) or ``manager`` (must succeed as the
        tool itself says it did)."""
        if who == "initd":
            proc = self.initd("install")
            assert proc.returncode == 0, (
                f"`initd precommit install` failed beside {self.manager.name} (steps so "
                f"far: {self.steps()}); the chain must install whatever the manager "
                f"did\n{shown(proc)}\n{self.describe()}")
        else:
            proc = self.manager.install(self)
            problem = self.manager.failed(proc)
            assert problem is None, (
                f"{self.manager.name}'s own install ({problem}) failed after the steps "
                f"{self.steps()}: initd must leave the manager able to install\n"
                f"{shown(proc)}\n{self.describe()}")
        self.installs.append((who, proc))
        return proc

    def steps(self) -> list[str]:
        return [who for who, _ in self.installs]

    def commit(self) -> subprocess.CompletedProcess[str]:
        """Change work.txt and ``git commit`` it, with every hook; the evidence file is
        emptied first."""
        self.commits += 1
        self.evidence_file.unlink(missing_ok=True)
        with open(self.repo / "work.txt", "a") as out:
            out.write(f"{self.commits}\n")
        self.git_ok("add", "work.txt")
        return run(["git", "commit", "-m", f"change {self.commits}"], self.repo, self.env)

    def evidence(self) -> list[str]:
        try:
            return self.evidence_file.read_text().split()
        except FileNotFoundError:
            return []

    def head(self) -> str:
        return self.git_ok("rev-parse", "HEAD").strip()

    def status(self) -> str:
        return self.git_ok("status", "--porcelain")

    # --- what is on disk ----------------------------------------------------------------

    def hook_dirs(self) -> dict[str, Path]:
        dirs = {".git/hooks": self.repo / ".git" / "hooks"}
        dirs.update(self.manager.hook_dirs(self))
        return dirs

    def snapshot(self) -> dict[str, tuple[str, object]]:
        """Every hook file (bytes and mode), .git/config, .git/info and the HOME (its
        ~/.gitconfig and anything else written there, but initd's own ~/.discobot);
        byte for byte but husky 4's time stamps."""
        entries: dict[str, tuple[str, object]] = {}

        def walk(base: Path, label: str, skip: tuple[str, ...] = ()) -> None:
            if not base.exists():
                return
            for path in sorted(base.rglob("*")):
                rel = path.relative_to(base)
                if rel.parts and rel.parts[0] in skip:
                    continue
                st = path.lstat()
                key = f"{label}/{rel}"
                if path.is_symlink():
                    entries[key] = ("symlink", os.readlink(path))
                elif path.is_dir():
                    entries[key] = (f"dir {oct(st.st_mode & 0o7777)}", "")
                else:
                    entries[key] = (f"file {oct(st.st_mode & 0o7777)}",
                                    HUSKY4_BANNER_TIME.sub(rb"\1<time>", path.read_bytes()))

        for label, base in self.hook_dirs().items():
            walk(base, label)
        walk(self.repo / ".git" / "info", ".git/info")
        entries[".git/config"] = ("file", (self.repo / ".git" / "config").read_bytes())
        walk(self.home, "~", skip=(".discobot", ".npm", ".cache"))
        return entries

    def describe(self) -> str:
        """The hook directories and the hooks configuration, for a failure message."""
        lines = [f"core.hooksPath: {self.git('config', 'core.hooksPath').stdout.strip()!r}",
                 f"git rev-parse --git-path hooks: "
                 f"{self.git('rev-parse', '--git-path', 'hooks').stdout.strip()}"]
        for label, base in self.hook_dirs().items():
            if base.is_dir():
                names = sorted(p.name for p in base.iterdir() if not p.name.endswith(".sample"))
                lines.append(f"{label}: {names}")
        return "\n".join(lines)


def diff_snapshots(before: dict[str, tuple[str, object]],
                   after: dict[str, tuple[str, object]]) -> list[str]:
    out = []
    for key in sorted(set(before) | set(after)):
        if key not in after:
            out.append(f"missing now: {key}")
        elif key not in before:
            out.append(f"new: {key} ({after[key][0]})")
        elif before[key] != after[key]:
            out.append(f"changed: {key}: {before[key][0]} {before[key][1]!r:.300} -> "
                       f"{after[key][0]} {after[key][1]!r:.300}")
    return out


# --- the managers -----------------------------------------------------------------------

class Manager:
    """One hook manager: its configuration files, its install command, its evidence."""

    name = ""
    label = ""  # the word its pre-commit hook appends to the evidence file
    mentions = re.compile(r"$^")  # how a line of initd's would name it
    # pre-commit's migration mode runs an existing hook *before* its own hooks (the tool's
    # documented order, when it is the one installed last)
    legacy_runs_first = False
    npm: tuple[str, str] | None = None  # the npm package it needs, and its version

    def evidence_cmd(self, ws: Workspace, word: str | None = None) -> str:
        cmd = f"echo {word or self.label} >> {shlex.quote(str(ws.evidence_file))}"
        return cmd + ("; exit 3" if ws.manager_fails else "")

    def files(self, ws: Workspace) -> dict[str, str]:
        return {}

    def prepare(self, ws: Workspace, node_modules: bool = True) -> None:
        """Anything else before the first commit: the lockfile and a copy (hard links) of
        the session's node_modules; a global hook."""
        if self.npm is not None:
            project = ws.toolchain.npm_project(self.name, dict([self.npm]))
            shutil.copy(project / "package-lock.json", ws.repo / "package-lock.json")
            os.utime(ws.repo / "package-lock.json", (FIXED_MTIME, FIXED_MTIME))
            if node_modules:
                proc = run(["cp", "-al", str(project / "node_modules"), str(ws.repo)],
                           ws.repo, ws.env)
                assert proc.returncode == 0, shown(proc)

    def package_json(self, extra: dict[str, object]) -> str:
        assert self.npm is not None
        return json.dumps({"name": "workspace", "private": True,
                           "devDependencies": dict([self.npm]), **extra}, indent=2) + "\n"

    def install(self, ws: Workspace) -> subprocess.CompletedProcess[str]:
        raise NotImplementedError

    def failed(self, proc: subprocess.CompletedProcess[str]) -> str | None:
        return None if proc.returncode == 0 else f"exit {proc.returncode}"

    def hook_dirs(self, ws: Workspace) -> dict[str, Path]:
        return {}

    def npm_install(self, ws: Workspace) -> subprocess.CompletedProcess[str]:
        """``npm install``, offline from the session's cache and the committed lockfile:
        what an agent runs after a clone, and what runs the packages' install scripts and
        the project's ``prepare``. (Not ``npm ci``: lefthook 2.2.2 names an optional
        ``lefthook-android-arm64`` the registry has no 2.2.2 of, so npm leaves it out of
        the lockfile and ``npm ci`` then refuses the lockfile as out of sync.)"""
        return run(["npm", "install", "--offline", "--no-audit", "--no-fund",
                    "--foreground-scripts"], ws.repo, ws.env)

    def __repr__(self) -> str:
        return self.name


class Husky9(Manager):
    """husky 9: ``husky`` (the ``prepare`` script ``npx husky init`` adds) sets
    ``core.hooksPath=.husky/_`` and writes a two-line stub per hook there that sources
    ``.husky/_/h``, which runs ``.husky/$(basename "$0")``."""

    name = "husky9"
    label = "husky9"
    mentions = re.compile(r"husky", re.I)
    npm: tuple[str, str] | None = ("husky", VERSIONS["husky9"])

    def files(self, ws: Workspace) -> dict[str, str]:
        return {"package.json": self.package_json({"scripts": {"prepare": "husky"}}),
                ".gitignore": "node_modules/\n",
                ".husky/pre-commit": self.evidence_cmd(ws) + "\n"}

    def install(self, ws: Workspace) -> subprocess.CompletedProcess[str]:
        # what `npx husky` and the prepare script run
        return run([str(ws.repo / "node_modules" / ".bin" / "husky")], ws.repo, ws.env)

    def failed(self, proc: subprocess.CompletedProcess[str]) -> str | None:
        # index.js returns '' on success, else the reason (and bin.js exits 0 either way)
        if proc.returncode != 0 or proc.stdout.strip():
            return f"husky printed {proc.stdout.strip()!r}, exit {proc.returncode}"
        return None

    def hook_dirs(self, ws: Workspace) -> dict[str, Path]:
        return {".husky/_": ws.repo / ".husky" / "_"}


class Husky4(Manager):
    """husky 4: the package's own npm ``install`` script writes a stub for every hook into
    ``.git/hooks`` (keeping an existing user hook), each sourcing ``husky.sh``, which takes
    the hook's name from ``basename "$0"`` and runs ``husky.hooks[name]`` of package.json."""

    name = "husky4"
    label = "husky4"
    mentions = re.compile(r"husky", re.I)
    npm: tuple[str, str] | None = ("husky", VERSIONS["husky4"])

    def files(self, ws: Workspace) -> dict[str, str]:
        return {"package.json": self.package_json(
                    {"husky": {"hooks": {"pre-commit": self.evidence_cmd(ws)}}}),
                ".gitignore": "node_modules/\n"}

    def install(self, ws: Workspace) -> subprocess.CompletedProcess[str]:
        # the README's "Reinstall": `npm rebuild` re-runs husky's install script (in the
        # foreground, so that its "husky > Done" shows)
        return run(["npm", "rebuild", "husky", "--foreground-scripts"], ws.repo, ws.env)

    def failed(self, proc: subprocess.CompletedProcess[str]) -> str | None:
        if proc.returncode != 0 or "husky > Done" not in proc.stdout:
            return f"no 'husky > Done', exit {proc.returncode}"
        return None


class Lefthook(Manager):
    """lefthook 2.x: ``lefthook install`` writes ``pre-commit`` (``lefthook run
    "pre-commit"``) into .git/hooks, renaming a hook that is not its own to
    ``pre-commit.old``, and refuses while ``core.hooksPath`` is set."""

    name = "lefthook"
    label = "lefthook"
    mentions = re.compile(r"lefthook", re.I)
    npm: tuple[str, str] | None = ("lefthook", VERSIONS["lefthook"])

    def files(self, ws: Workspace) -> dict[str, str]:
        return {"package.json": self.package_json({}),
                ".gitignore": "node_modules/\n",
                "lefthook.yml": "pre-commit:\n  commands:\n    evidence:\n      run: "
                                + json.dumps(self.evidence_cmd(ws)) + "\n"}

    def install(self, ws: Workspace) -> subprocess.CompletedProcess[str]:
        # `npx lefthook install`
        return run([str(ws.repo / "node_modules" / ".bin" / "lefthook"), "install"],
                   ws.repo, ws.env)


class SimpleGitHooks(Manager):
    """simple-git-hooks: ``simple-git-hooks`` writes each configured hook, its command
    after a fixed prologue, over whatever is in .git/hooks (or the *local*
    ``core.hooksPath``), and deletes the hooks it is not configured for."""

    name = "simple-git-hooks"
    label = "simple-git-hooks"
    mentions = re.compile(r"simple-git-hooks", re.I)
    npm: tuple[str, str] | None = ("simple-git-hooks", VERSIONS["simple-git-hooks"])

    def files(self, ws: Workspace) -> dict[str, str]:
        return {"package.json": self.package_json(
                    {"scripts": {"prepare": "simple-git-hooks"},
                     "simple-git-hooks": {"pre-commit": self.evidence_cmd(ws)}}),
                ".gitignore": "node_modules/\n"}

    def install(self, ws: Workspace) -> subprocess.CompletedProcess[str]:
        # `npx simple-git-hooks`
        return run([str(ws.repo / "node_modules" / ".bin" / "simple-git-hooks")], ws.repo,
                   ws.env)

    def failed(self, proc: subprocess.CompletedProcess[str]) -> str | None:
        if proc.returncode != 0 or "[ERROR]" in proc.stdout + proc.stderr:
            return f"an [ERROR], exit {proc.returncode}"
        return None


class PreCommit(Manager):
    """The pre-commit framework: ``pre-commit install`` writes its script into .git/hooks,
    moving a hook that is not its own to ``pre-commit.legacy`` (migration mode, which runs
    that hook first), and refuses while ``core.hooksPath`` is set."""

    name = "pre-commit"
    label = "pre-commit"
    mentions = re.compile(r"pre-commit (framework|install)|\.pre-commit-config\.yaml"
                          r"|pre-commit\.com", re.I)
    legacy_runs_first = True

    def files(self, ws: Workspace) -> dict[str, str]:
        entry = "sh -c " + shlex.quote(self.evidence_cmd(ws))
        return {".pre-commit-config.yaml":
                "repos:\n- repo: local\n  hooks:\n  - id: evidence\n    name: evidence\n"
                f"    entry: {json.dumps(entry)}\n    language: system\n"
                "    pass_filenames: false\n    always_run: true\n"}

    def prepare(self, ws: Workspace, node_modules: bool = True) -> None:
        ws.toolchain.pre_commit()

    def install(self, ws: Workspace) -> subprocess.CompletedProcess[str]:
        return run([str(ws.toolchain.pre_commit()), "install"], ws.repo, ws.env)


class GitHooksDir(Manager):
    """A committed ``.githooks/`` that ``git config core.hooksPath .githooks`` points at
    (git's own mechanism, no tool). Its hook writes its own name: it must run as
    ``pre-commit``."""

    name = "githooks"
    label = "githooks:pre-commit"
    mentions = re.compile(r"\.githooks|core\.hooksPath", re.I)

    def evidence_cmd(self, ws: Workspace, word: str | None = None) -> str:
        return super().evidence_cmd(ws, 'githooks:"$(basename "$0")"')

    def files(self, ws: Workspace) -> dict[str, str]:
        return {".githooks/pre-commit": "#!/bin/sh\n" + self.evidence_cmd(ws) + "\n"}

    def install(self, ws: Workspace) -> subprocess.CompletedProcess[str]:
        return run(["git", "config", "core.hooksPath", ".githooks"], ws.repo, ws.env)

    def hook_dirs(self, ws: Workspace) -> dict[str, Path]:
        return {".githooks": ws.repo / ".githooks"}


class GlobalHooksPath(Manager):
    """``core.hooksPath`` in ``~/.gitconfig`` (the test's HOME) naming a directory of the
    user's own hooks, as a secret scanner installs itself. Its hook writes its own name."""

    name = "global-hooksPath"
    label = "global:pre-commit"
    mentions = re.compile(r"core\.hooksPath|global", re.I)

    def global_dir(self, ws: Workspace) -> Path:
        return ws.home / "global-hooks"

    def evidence_cmd(self, ws: Workspace, word: str | None = None) -> str:
        return super().evidence_cmd(ws, 'global:"$(basename "$0")"')

    def prepare(self, ws: Workspace, node_modules: bool = True) -> None:
        hook = self.global_dir(ws) / "pre-commit"
        hook.parent.mkdir()
        hook.write_text("#!/bin/sh\n" + self.evidence_cmd(ws) + "\n")
        hook.chmod(0o755)
        os.utime(hook, (FIXED_MTIME, FIXED_MTIME))

    def install(self, ws: Workspace) -> subprocess.CompletedProcess[str]:
        return run(["git", "config", "--global", "core.hooksPath", str(self.global_dir(ws))],
                   ws.repo, ws.env)

    def hook_dirs(self, ws: Workspace) -> dict[str, Path]:
        return {"~/global-hooks": self.global_dir(ws)}


class ViaNpm(Manager):
    """An npm manager installed the way an agent does after a clone: ``npm install``
    (offline, from the session's cache and the committed lockfile), which runs the
    packages' install scripts (husky 4's ``install``, lefthook's and simple-git-hooks'
    ``postinstall``) and the project's ``prepare`` (husky 9, simple-git-hooks)."""

    def __init__(self, inner: Manager) -> None:
        self.inner = inner
        self.name = f"{inner.name}-via-npm-install"
        self.label = inner.label
        self.mentions = inner.mentions
        self.npm = inner.npm
        self.legacy_runs_first = inner.legacy_runs_first

    def evidence_cmd(self, ws: Workspace, word: str | None = None) -> str:
        return self.inner.evidence_cmd(ws, word)

    def files(self, ws: Workspace) -> dict[str, str]:
        return self.inner.files(ws)

    def prepare(self, ws: Workspace, node_modules: bool = True) -> None:
        self.inner.prepare(ws, node_modules=False)  # a fresh clone: npm install brings them

    def install(self, ws: Workspace) -> subprocess.CompletedProcess[str]:
        return self.npm_install(ws)

    def failed(self, proc: subprocess.CompletedProcess[str]) -> str | None:
        if proc.returncode != 0:
            return f"npm install exit {proc.returncode}"
        if self.inner.name == "husky4" and "husky > Done" not in proc.stdout:
            return "husky 4's install script did not finish"
        if "[ERROR]" in proc.stdout + proc.stderr:
            return "an [ERROR]"
        return None

    def hook_dirs(self, ws: Workspace) -> dict[str, Path]:
        return self.inner.hook_dirs(ws)


MANAGERS: list[Manager] = [Husky9(), Husky4(), Lefthook(), SimpleGitHooks(), PreCommit(),
                           GitHooksDir(), GlobalHooksPath()]
NPM_MANAGERS: list[Manager] = [ViaNpm(m) for m in MANAGERS if m.npm is not None]
