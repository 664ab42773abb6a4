"""What the Claude Code hooks conformance tests share: a real ``initd service`` for a
workspace with Claude Code settings files, events fired at it over its Unix socket (HTTP)
or with ``initd emit``, and hooks that leave what they saw in files.

Only initd's public interface is used (docs/control-api.md, docs/events.md,
docs/claude-code.md): the service is started as ``initd service
--socket S --workspace W --session-id ID``, events are ``POST /v1/events/<event>`` and
``initd emit EVENT --data JSON`` (exit 0, 2 blocked, 3 stop).

Hermetic: each session has a HOME of its own (the user's ``~/.claude/settings.json`` and
initd's state under it), and, when the tests run as root, the service runs in a mount
namespace of its own where ``/etc`` is an overlay, so that the managed
``/etc/claude-code/managed-settings.json`` a test writes is that service's alone and one on
the host never reaches it.

The reference is Claude Code's public documentation:

- HOOKS = https://code.claude.com/docs/en/hooks (the current revision: its snapshot of
  2026-08-22, Claude Code v2.1.24x; "old revision" is the same page as published from
  2025-07 to 2026-01, which had a 60-second default timeout, no Stop cap, a snapshot of
  the hooks at startup, and JSON read on exit 0 only)
- GUIDE = https://code.claude.com/docs/en/hooks-guide
- SETTINGS = https://code.claude.com/docs/en/settings
- SETTINGS_REF = https://code.claude.com/docs/en/settings-reference
- MANAGED = https://code.claude.com/docs/en/managed-settings
"""

from __future__ import annotations

import http.client
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.support.harness import wait_for

HOOKS = "https://code.claude.com/docs/en/hooks"
GUIDE = "https://code.claude.com/docs/en/hooks-guide"
SETTINGS = "https://code.claude.com/docs/en/settings"
SETTINGS_REF = "https://code.claude.com/docs/en/settings-reference"
MANAGED = "https://code.claude.com/docs/en/managed-settings"

INITD = [sys.executable, "-m", "initd"]
GIT_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
AS_ROOT = os.geteuid() == 0

# Claude Code's event name -> initd's (docs/events.md).
EVENTS = {
    "PreToolUse": "pre_tool",
    "PostToolUse": "post_tool",
    "PostToolUseFailure": "post_tool_failure",
    "UserPromptSubmit": "user_prompt_submit",
    "Stop": "stop",
    "SubagentStop": "subagent_stop",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "PreCompact": "pre_compact",
    "Notification": "notification",
    "TeammateIdle": "teammate_idle",
    "TaskCompleted": "task_completed",
}

# What the agent sends for each event: the event's own fields, as the reference's input
# examples show them (no common field: initd's job is to add those).
PAYLOADS: dict[str, dict[str, Any]] = {
    "PreToolUse": {"tool_name": "Bash", "tool_input": {"command": "npm test"},
                   "tool_use_id": "toolu_01ABC123"},
    "PostToolUse": {"tool_name": "Write",
                    "tool_input": {"file_path": "/tmp/f.txt", "content": "x"},
                    "tool_response": {"filePath": "/tmp/f.txt", "success": True},
                    "tool_use_id": "toolu_01ABC124"},
    "PostToolUseFailure": {"tool_name": "Bash", "tool_input": {"command": "npm test"},
                           "tool_use_id": "toolu_01ABC125",
                           "error": "Exit code 1\nError: Cannot find module 'express'"},
    "UserPromptSubmit": {"prompt": "Write a function to calculate the factorial"},
    "Stop": {"last_assistant_message": "Done."},
    "SubagentStop": {"agent_id": "def456", "agent_type": "Explore",
                     "last_assistant_message": "Analysis complete."},
    "SessionStart": {"source": "startup"},
    "SessionEnd": {"reason": "other"},
    "PreCompact": {"trigger": "manual", "custom_instructions": ""},
    "Notification": {"message": "Claude needs your permission", "title": "Permission needed",
                     "notification_type": "permission_prompt"},
    "TeammateIdle": {"teammate_name": "researcher", "team_name": "session-a1b2c3d4"},
    "TaskCompleted": {"task_id": "task-001", "task_subject": "Implement authentication"},
}

# A deadline for things that happen at once when initd is right (a generous one: it only
# bounds how long a failing test waits, it is never what a test asserts).
DEADLINE = 30.0


def q(path: Path | str) -> str:
    """A path as one shell word."""
    return shlex.quote(str(path))


def command(text: str, **more: Any) -> dict[str, Any]:
    """A ``type: command`` hook handler."""
    return {"type": "command", "command": text, **more}


def group(*handlers: dict[str, Any], matcher: str | None = None) -> dict[str, Any]:
    """A matcher group (no ``matcher`` key when ``matcher`` is None)."""
    out: dict[str, Any] = {"hooks": list(handlers)}
    if matcher is not None:
        out["matcher"] = matcher
    return out


def hooks(**events: list[dict[str, Any]] | dict[str, Any]) -> dict[str, Any]:
    """``{"hooks": {Event: [groups]}}``; a single group may be given bare."""
    return {"hooks": {name: (value if isinstance(value, list) else [value])
                      for name, value in events.items()}}


class _UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("initd", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


class Session:
    """A workspace (a git repository) with Claude Code settings, a HOME, and the hook
    service for them, started on ``start()``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = root / "ws"
        self.home = root / "home"
        self.out = root / "out"  # where hooks leave what they saw
        for path in (self.ws, self.home, self.out):
            path.mkdir(parents=True)
        subprocess.run(["git", "-C", str(self.ws), "init", "-q"], check=True, env=GIT_ENV,
                       capture_output=True)
        self.sid = f"cc-{uuid.uuid4().hex[:10]}"
        self._short = Path(tempfile.mkdtemp(prefix="icc-", dir="/tmp"))  # sun_path: 108
        self.sock = str(self._short / "s.sock")
        self.etc_upper = self._short / "etc-upper"
        self.etc_work = self._short / "etc-work"
        self.log = root / "service.log"
        self.env: dict[str, str] = {}
        self.proc: subprocess.Popen[str] | None = None
        self._log_file: Any = None

    # settings files -------------------------------------------------------------------

    def project(self, settings: dict[str, Any]) -> Path:
        return self._write(self.ws / ".claude" / "settings.json", settings)

    def local(self, settings: dict[str, Any]) -> Path:
        return self._write(self.ws / ".claude" / "settings.local.json", settings)

    def user(self, settings: dict[str, Any]) -> Path:
        return self._write(self.home / ".claude" / "settings.json", settings)

    def managed(self, settings: dict[str, Any]) -> Path:
        """/etc/claude-code/managed-settings.json, as this session's service sees it."""
        if not AS_ROOT:
            import pytest

            pytest.skip("a managed settings file of the test's own needs root (a mount "
                        "namespace with /etc as an overlay)")
        return self._write(self.etc_upper / "claude-code" / "managed-settings.json", settings)

    def _write(self, path: Path, settings: dict[str, Any]) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings, indent=2))
        return path

    def script(self, name: str, body: str) -> Path:
        """An executable bash script in the workspace's .claude/hooks/."""
        path = self.ws / ".claude" / "hooks" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/bash\n" + body + "\n")
        path.chmod(0o755)
        return path

    # the service --------------------------------------------------------------------

    def start(self) -> Session:
        self.etc_upper.mkdir(exist_ok=True)
        self.etc_work.mkdir(exist_ok=True)
        service = [*INITD, "service", "--socket", self.sock, "--workspace", str(self.ws),
                   "--session-id", self.sid, "--hooks-dir", str(self.ws / "no-image")]
        if AS_ROOT:
            overlay = (f"mount -t overlay overlay -o lowerdir=/etc,upperdir={q(self.etc_upper)}"
                       f",workdir={q(self.etc_work)} /etc && exec \"$@\"")
            argv = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                    overlay, "sh", *service]
        else:
            argv = service
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("INITD_", "CLAUDE_")) and k not in ("WORKSPACE_PATH",)}
        env.update({"HOME": str(self.home), **self.env})
        self._log_file = open(self.log, "w")  # noqa: SIM115 (closed in stop())
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self._log_file,
                                     text=True, env=env, cwd=str(self.ws))
        assert self.proc.stdout is not None
        from tests.support import logtails  # (a failed test shows the service's log)

        logtails.started(self.describe)
        line = self.proc.stdout.readline()
        assert line.startswith("ready"), f"the hook service did not start: {line!r}\n" + \
            self.log.read_text()
        return self

    def describe(self) -> str:
        code = self.proc.poll() if self.proc is not None else None
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return (f"$ initd service (session {self.sid})\n"
                f"  {'still running' if code is None else f'exit {code}'}\n"
                f"  its log (its end):\n{text[-3000:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(15)
        if self._log_file is not None:
            self._log_file.close()
        shutil.rmtree(self._short, ignore_errors=True)

    def log_lines(self) -> list[str]:
        return [line for line in self.log.read_text().splitlines() if line.strip()]

    # events --------------------------------------------------------------------------

    def post(self, event: str, payload: dict[str, Any] | None = None,
             timeout: float = 300) -> dict[str, Any]:
        """``POST /v1/events/<event>`` (Claude Code's name or initd's): the Outcome."""
        name = EVENTS.get(event, event)
        conn = _UnixHTTP(self.sock, timeout)
        try:
            body = json.dumps(payload if payload is not None else PAYLOADS.get(event, {}))
            conn.request("POST", f"/v1/events/{name}", body=body,
                         headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            data = response.read()
        finally:
            conn.close()
        assert response.status == 200, f"{response.status}: {data[:2000]!r}"
        outcome: dict[str, Any] = json.loads(data)
        return outcome

    def emit(self, event: str, payload: dict[str, Any] | None = None,
             timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """``initd emit EVENT --data JSON``: exit 0, 2 blocked, 3 stop."""
        data = json.dumps(payload if payload is not None else PAYLOADS.get(event, {}))
        return subprocess.run([*INITD, "emit", event, "--data", data], capture_output=True,
                              text=True, timeout=timeout,
                              env={**os.environ, "INITD_SOCKET": self.sock,
                                   "HOME": str(self.home)})

    # what hooks saw ------------------------------------------------------------------

    def record(self, name: str) -> str:
        """A shell command that saves the hook's stdin as out/<name>.json (one more line
        in out/<name>.count for each run)."""
        saved, count = self.out / f"{name}.json", self.out / f"{name}.count"
        return f"cat > {q(saved)}; echo run >> {q(count)}"

    def seen(self, name: str) -> dict[str, Any]:
        path = self.out / f"{name}.json"
        assert path.exists(), f"hook {name!r} did not run"
        text = path.read_text()
        assert text.strip(), f"hook {name!r} got nothing on stdin"
        data: dict[str, Any] = json.loads(text)
        return data

    def runs(self, name: str) -> int:
        path = self.out / f"{name}.count"
        return len(path.read_text().splitlines()) if path.exists() else 0


def results_of(outcome: dict[str, Any], text: str) -> list[dict[str, Any]]:
    """The outcome's results whose command (or hook or error) mentions ``text``."""
    found = []
    for result in outcome["results"]:
        where = " ".join(str(result.get(key) or "") for key in ("command", "hook", "error"))
        if text in where:
            found.append(result)
    return found


def one_result(outcome: dict[str, Any], text: str) -> dict[str, Any]:
    found = results_of(outcome, text)
    assert len(found) == 1, f"{len(found)} results mention {text!r}: {outcome['results']}"
    return found[0]


def wait_until(probe: Callable[[], object], timeout: float = DEADLINE,
               what: str = "condition") -> object:
    """harness.wait_for, with this module's deadline."""
    return wait_for(probe, timeout, what)


# An HTTP hook's endpoint: a real server on 127.0.0.1, on a port the kernel picks. --------


class Endpoint:
    """Records each request (method, path, headers, body) and answers with ``status`` and
    ``body``."""

    def __init__(self, status: int = 200, body: str = "") -> None:
        self.status = status
        self.body = body
        self.requests: list[dict[str, Any]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                endpoint.requests.append({"method": "POST", "path": self.path,
                                          "headers": {k.lower(): v for k, v in
                                                      self.headers.items()},
                                          "body": raw})
                data = endpoint.body.encode()
                self.send_response(endpoint.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hooks/event"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True,
                                        kwargs={"poll_interval": 0.05})
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def session_fixture(tmp_path: Path) -> Iterator[Session]:
    session = Session(tmp_path)
    try:
        yield session
    finally:
        session.stop()
