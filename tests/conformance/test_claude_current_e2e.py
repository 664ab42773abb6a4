"""The real Claude Code calls initd: ``@anthropic-ai/claude-code@2.1.240`` (npm, pinned; the
release of the reference's revision of 2026-08-22) started with ``--init-only`` fires its
own Setup and SessionStart hooks and exits, with no model, no credentials and (as root) no
network. Its hook line is ``initd emit --from claude``; the hooks initd runs are the
workspace's. REF = https://code.claude.com/docs/en/hooks.

The binary is installed once per session by npm into a temporary directory (the downloads
kept in .pytest_cache/claude-code, so a later session fetches nothing), never run from the
host's own PATH. A machine where npm cannot install it fails the test, saying why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_current_support import shim_command
from tests.conformance.claude_hooks_support import (
    AS_ROOT,
    INITD,
    Session,
    command,
    group,
    hooks,
    session_fixture,
)
from tests.support.hookmanagers import Toolchain, ToolUnavailable, shown

VERSION = "2.1.240"
pytestmark = [pytest.mark.timeout(600), pytest.mark.slow,
              pytest.mark.xdist_group("claude-code")]


@pytest.fixture(scope="session")
def claude(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Path:
    """The native `claude` of the pinned release (its platform package's binary: npm runs
    no install script here, and the wrapper's bin is a placeholder until one does)."""
    cache = pytestconfig.rootpath / ".pytest_cache" / "claude-code"
    cache.mkdir(parents=True, exist_ok=True)
    toolchain = Toolchain(tmp_path_factory.mktemp("claude-code"), cache)
    try:
        project = toolchain.npm_project("claude-code", {"@anthropic-ai/claude-code": VERSION})
    except ToolUnavailable as exc:
        pytest.fail(f"Claude Code {VERSION} could not be installed: {exc}", pytrace=False)
    found = sorted((project / "node_modules" / "@anthropic-ai").glob("claude-code-linux-*/claude"))
    if not found:
        pytest.fail(f"no native claude binary for this platform in {project}", pytrace=False)
    return found[0]


@pytest.fixture
def cc(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def run_claude(claude: Path, cc: Session, home: Path,
               cwd: Path) -> subprocess.CompletedProcess[str]:
    """`claude --init-only` with a HOME of its own, in ``cwd``, INITD_SOCKET set (its hooks
    inherit its environment, REF "Handlers run in the current directory with Claude Code's
    environment"), no network as root (a network namespace of its own)."""
    env = {"PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
           "HOME": str(home), "LANG": "C.UTF-8", "TERM": "dumb", "INITD_SOCKET": cc.sock,
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    argv = [str(claude), "--debug-file", str(home / "debug.log"), "--init-only"]
    if AS_ROOT:
        argv = ["unshare", "--net", "--", *argv]
    return subprocess.run(argv, cwd=str(cwd), env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=300)


def workspace_hooks(cc: Session) -> None:
    """The workspace's own hooks, which initd runs: record stdin, and (SessionStart)
    persist a variable in CLAUDE_ENV_FILE."""
    cc.project(hooks(
        Setup=group(command(cc.record("setup")), matcher="init"),
        SessionStart=group(command(
            cc.record("start") + "; [ -n \"$CLAUDE_ENV_FILE\" ] && "
            "echo 'export FROM_INITD=1' >> \"$CLAUDE_ENV_FILE\""), matcher="startup")))


def claude_home(cc: Session, settings: dict[str, object] | None) -> tuple[Path, Path]:
    """Claude Code's HOME (its user settings: the shim) and a directory of its own to run
    in, so that it runs the workspace's hooks only through initd, never itself."""
    home, cwd = cc.root / "claude-home", cc.root / "claude-cwd"
    cwd.mkdir()
    if settings is not None:
        cc._write(home / ".claude" / "settings.json", settings)
    home.mkdir(exist_ok=True)
    return home, cwd


def check_the_round_trip(cc: Session, home: Path, proc: subprocess.CompletedProcess[str]) -> None:
    detail = shown(proc) + "\n--- debug log ---\n" + \
        ((home / "debug.log").read_text()[-4000:] if (home / "debug.log").exists() else "")
    assert proc.returncode == 0, detail
    setup, start = cc.seen("setup"), cc.seen("start")
    assert setup["hook_event_name"] == "Setup" and setup["trigger"] == "init", setup
    assert start["hook_event_name"] == "SessionStart" and start["source"] == "startup", start
    assert setup["session_id"] == start["session_id"], (setup, start)  # Claude Code's own
    env_files = list((home / ".claude" / "session-env").glob("*/sessionstart-hook-*.sh"))
    assert any("export FROM_INITD=1" in f.read_text() for f in env_files), (env_files, detail)


def test_claude_codes_setup_and_session_start_reach_initds_hooks(claude: Path,
                                                                 cc: Session) -> None:
    """REF, "Setup": "When you run claude --init-only, Claude Code runs Setup hooks and
    SessionStart hooks with the startup matcher, then exits without starting a
    conversation." "Persist environment variables": SessionStart hooks write `export`
    lines to CLAUDE_ENV_FILE.

    Claude Code's user settings route both events to `initd emit --from claude`; initd
    runs the workspace's hooks for them with Claude Code's payload (its session, `trigger`
    init, `source` startup), and what they append to CLAUDE_ENV_FILE lands in the file
    Claude Code gave its hook."""
    workspace_hooks(cc)
    cc.start()
    line = {"type": "command", "command": shim_command()}
    home, cwd = claude_home(cc, {"hooks": {"Setup": [{"hooks": [line]}],
                                           "SessionStart": [{"hooks": [line]}]}})
    check_the_round_trip(cc, home, run_claude(claude, cc, home, cwd))


def test_the_shim_written_by_initd_works_in_the_real_claude_code(claude: Path,
                                                                 cc: Session) -> None:
    """The interface (issue 37, 4): `initd shim claude --write` merges the routing of every
    event into the user's own settings. The real Claude Code accepts the file (it starts,
    runs its hooks and exits 0) and its Setup and SessionStart reach initd's hooks."""
    workspace_hooks(cc)
    cc.start()
    home, cwd = claude_home(cc, None)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INITD_", "CLAUDE_"))}
    written = subprocess.run([*INITD, "shim", "claude", "--write"], capture_output=True,
                             text=True, timeout=60, env={**env, "HOME": str(home)})
    assert written.returncode == 0, shown(written)
    assert "Setup" in json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    check_the_round_trip(cc, home, run_claude(claude, cc, home, cwd))
