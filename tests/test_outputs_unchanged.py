"""What a user sees stays what it was: every verb's output and the control API's answers on
the demo workspace, compared byte for byte with `tests/golden/demo-workspace.txt`.

The workspace is the bundled demo's (images/demo/workspace) plus one config of each other
format and a few broken files, so that every loader and every way a problem is shown is
in the transcript. Only what differs from run to run is masked: the temporary paths, pids,
durations and times. A refactoring that changes a byte of what a user reads fails here;
a deliberate change regenerates the file (INITD_GOLDEN=write) and shows in its diff.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.commands import client

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "images" / "demo" / "workspace"
FIXTURES = Path(__file__).parent / "events" / "fixtures"
GOLDEN = Path(__file__).parent / "golden" / "demo-workspace.txt"
INITD = [sys.executable, "-m", "initd"]

DEVCONTAINER = """{
  // JSONC, as the Dev Container spec allows
  "name": "demo",
  "onCreateCommand": "echo created",
  "postStartCommand": ["echo", "started"],
  "postAttachCommand": {"a": "echo one", "b": ["echo", "two"]},
  "postCreateCommand": 5,
  "waitFor": "postStartCommand",
}
"""
BROKEN = {  # one problem of each kind a loader reports
    ".discobot/hooks/90-typo.sh": "#!/bin/sh\n#---\n# type: sesion\n#---\ntrue\n",
    ".discobot/hooks/91-timeout.sh": "#!/bin/sh\n#---\n# type: file\n# pattern: '*.c'\n"
                                     "# timeout: -3\n#---\ntrue\n",
    ".claude/settings.local.json": '{"hooks": {"Stop": [{"hooks": [{"type": "command", '
                                   '"command": "true", "timeout": 0}]}], "Nope": []}}',
    ".discobot/hooks/92-no-pattern.sh": "#!/bin/sh\n#---\n# type: file\n#---\ntrue\n",
}
MASKS = [  # (pattern, replacement): only what changes between two runs
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), "<TIME>"),
    (re.compile(r'("(?:durationMs|uptimeSeconds|uptimeMs|elapsedMs|pid|ppid)": )[0-9.]+'),
     r"\1<N>"),
    (re.compile(r"\b(pid|took|in) [0-9.]+(m?s)?\b"), r"\1 <N>"),
]


@pytest.fixture
def where() -> Iterator[Path]:
    """A directory of its own, its path always as long (tables pad to the paths they
    show), with a HOME of its own (``initd sessions`` lists every session of HOME)."""
    path = Path(tempfile.mkdtemp(prefix="initd-golden-"))
    (path / "home").mkdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def workspace(where: Path) -> Iterator[Path]:
    ws = where / "ws"
    shutil.copytree(DEMO, ws, symlinks=True)
    shutil.copy(FIXTURES / "autoagent.json", (ws / ".autoagent").mkdir() or
                ws / ".autoagent" / "config.json")
    shutil.copy(FIXTURES / "pipeline.yaml", ws / "pipeline.yaml")
    (ws / ".claude").mkdir()
    shutil.copy(FIXTURES / "claude" / "settings.json", ws / ".claude" / "settings.json")
    (ws / ".devcontainer").mkdir()
    (ws / ".devcontainer" / "devcontainer.json").write_text(DEVCONTAINER)
    for name, text in BROKEN.items():
        (ws / name).write_text(text)
        (ws / name).chmod(0o755)
    for argv in (["init", "-q"], ["config", "user.name", "Golden"],
                 ["config", "user.email", "golden@example.invalid"]):
        subprocess.run(["git", "-C", str(ws), *argv], check=True)
    yield ws


def masked(text: str, tmp: Path) -> str:
    text = text.replace(str(tmp / "home"), "<HOME>")
    text = text.replace(str(tmp), "<TMP>").replace(sys.executable, "<PYTHON>")
    for pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return text


class Transcript:
    def __init__(self, ws: Path, sock: str, session: str) -> None:
        self.ws, self.sock, self.session = ws, sock, session
        self.lines: list[str] = []
        self.env = {**os.environ, "INITD_SOCKET": sock, "COLUMNS": "100",
                    "INITD_SESSION_ID": session, "HOME": str(ws.parent / "home")}

    def verb(self, *argv: str, stdin: str | None = None) -> None:
        out = subprocess.run([*INITD, *argv], capture_output=True, text=True, timeout=60,
                             cwd=self.ws, env=self.env, input=stdin)
        self.lines += [f"$ initd {' '.join(argv)}", f"exit {out.returncode}",
                       "stdout:", out.stdout, "stderr:", out.stderr]

    def api(self, method: str, path: str, body: object = None) -> None:
        status, answer = client.call(method, path, body, sock=self.sock, timeout=60)
        self.lines += [f"> {method} {path} {json.dumps(body)}", f"< {status}",
                       json.dumps(answer, indent=2, sort_keys=True)]


def record(ws: Path, tmp: Path) -> str:
    session = f"golden-{uuid.uuid4().hex[:8]}"
    sock = str(tmp / "initd.sock")
    common = ["--workspace", str(ws), "--hooks-dir", str(tmp / "no-image-hooks")]
    t = Transcript(ws, sock, session)
    t.verb("--help")
    for verb in ("hooks", "precommit", "service", "status", "health", "ready", "turn",
                 "emit", "sessions", "config"):
        t.verb(verb, "--help")
    t.verb("hooks", "list", *common)
    t.verb("hooks", "list", "--json", *common)
    t.verb("hooks", "check", *common)
    t.verb("hooks", "run", "40-optional-tool", *common, "--session-id", session)
    t.verb("hooks", "run", "no-such-hook", *common)
    t.verb("precommit", "install", *common)
    t.verb("precommit", "run", "50-no-todo", *common)
    t.verb("sessions", "--json")
    service = subprocess.Popen([*INITD, "service", "--socket", sock, *common,
                                "--session-id", session], stdout=subprocess.PIPE, text=True,
                               cwd=ws, env=t.env)
    try:
        assert service.stdout is not None
        assert service.stdout.readline().startswith("ready")
        for path in ("/v1/health", "/v1/ready", "/v1/hooks", "/v1/status", "/v1/nothing"):
            t.api("GET", path)
        t.verb("health")
        t.verb("ready")
        t.verb("status")
        t.verb("emit", "pre_iteration", "--data", '{"iteration": 1, "session": "demo"}')
        t.verb("emit", "pre_tool", "--data", '{"tool_name": "bash", "command": "rm -rf /"}')
        t.verb("emit", "pre_tool", "--data", '{"tool_name": "bash", "command": "ls"}')
        t.verb("emit", "no_such_event")
        t.api("POST", "/v1/events/pre_tool", {"tool_name": "Bash", "tool_input":
                                              {"command": "ls"}})
        (ws / "hello.py").write_text('print("hello"\n')
        t.verb("turn", "--trigger", "user")
        t.verb("hooks", "output", "60-python-syntax")
        (ws / "hello.py").write_text('print("hello")\n')
        t.api("POST", "/v1/turn", {"trigger": "hook"})
        t.verb("hooks", "rerun", "70-index")
        t.verb("hooks", "output", "70-index")
        t.api("POST", "/v1/turn/cancel")
        t.verb("status")
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(30)
    t.verb("precommit", "uninstall", *common)
    return masked("\n".join(t.lines), tmp).replace(session, "<SESSION>")


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the transcript is root's (who runs the hooks)")
def test_every_verb_and_answer_is_byte_for_byte_what_it_was(workspace: Path,
                                                            where: Path) -> None:
    got = record(workspace, where)
    if os.environ.get("INITD_GOLDEN") == "write":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(got)
    want = GOLDEN.read_text()
    diff = "\n".join(difflib.unified_diff(want.splitlines(), got.splitlines(), "before",
                                          "now", lineterm="", n=2))
    assert got == want, f"what a user sees changed ({GOLDEN.name}):\n{diff}"
