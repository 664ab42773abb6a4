"""Helpers shared by the hook and service tests: results, git repositories, contexts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from initd.commands import options
from initd.config import log, settings
from initd.hooks import context
from initd.process.runner import Result

ROOT_HOME = os.environ["HOME"]  # the run's own (tests/conftest.py): hooks as the tests' user
GIT_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def result(code: int, path: str = "/tmp/x.log") -> Result:
    return Result(exit_code=code, signal=None, timed_out=False, cancelled=False, duration=0.1,
                  output_path=path, truncated=False, exec_error=None, head=b"", tail=b"",
                  lines=0)


def git(repo: Path, *args: str, user: str | None = None,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """git in ``repo`` (as ``user`` when given), free of any calling git's GIT_*."""
    prefix = ["runuser", "-u", user, "--"] if user else []
    return subprocess.run([*prefix, "git", "-C", str(repo), *args], capture_output=True,
                          text=True, env=GIT_ENV, timeout=60, input=stdin)


def git_ok(repo: Path, *args: str) -> None:
    """git for a test's set-up: a failure fails the test here, not later."""
    out = git(repo, *args)
    assert out.returncode == 0, f"git {' '.join(args)}: {out.stderr}"


def git_repo(path: Path, identity: bool = True) -> Path:
    """A fresh repository at ``path`` (with a committer identity unless told not)."""
    path.mkdir(parents=True)
    git_ok(path, "init", "-q")
    if identity:
        git_ok(path, "config", "user.email", "agent@example.com")
        git_ok(path, "config", "user.name", "Agent")
    return path


def hook_context(workspace: Path, sid: str) -> context.HookContext:
    """A HookContext for ``workspace`` as initd would build it (no image hooks)."""
    flags = options.parse(["--workspace", str(workspace), "--session-id", sid, "--hooks-dir",
                           str(workspace / "no-image"), "--", "true"])
    return context.make(settings.load(flags, {}), None, log.get(), sid)


def forget_session(sid: str, *homes: str) -> None:
    """Remove the state a test's session left under ~/.discobot (its hooks' and its
    events' state, and its session record)."""
    for home in (ROOT_HOME, *homes):
        shutil.rmtree(os.path.join(home, ".discobot", sid), ignore_errors=True)
        records = Path(home, ".discobot", "sessions")
        for path in records.glob(f"{sid}.*"):
            path.unlink()
        for path in records.glob(f".{sid}.*"):  # its lock
            path.unlink()
        current = records / "current"
        if current.is_symlink() and os.readlink(current).startswith(f"{sid}."):
            current.unlink()


def add_hook(directory: Path, filename: str, body: str, **fields: object) -> Path:
    """A discobot hook file: a shebang, front matter (``fields``), a body."""
    front = "".join(f"# {key}: {json.dumps(value)}\n" for key, value in fields.items())
    path = directory / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n#---\n{front}#---\n{body}\n")
    path.chmod(0o755)
    return path


def checker(repo: Path, filename: str, pattern: str, bad_word: str, **fields: object) -> None:
    """A file hook that fails while any matching dirty file contains ``bad_word``."""
    add_hook(repo / ".discobot" / "hooks", filename,
             f'for f in $DISCOBOT_CHANGED_FILES; do if grep -q {bad_word} "$f"; then '
             f'echo "$f: has {bad_word}"; exit 1; fi; done; echo ok',
             type="file", pattern=pattern, **fields)


def settle() -> None:
    """Let the file system's coarse clock tick past the writes just made, as discobot's hooks spec's
    200 ms pause after a turn does: a write in the marker's own tick counts again."""
    time.sleep(0.02)
