"""What the Gemini CLI hooks conformance tests share: Gemini's settings files for a real
``initd service`` (claude_hooks_support.Session), Gemini's own hook payloads put to
``initd emit --from gemini``, and ``read_answer``: how Gemini CLI reads a hook's exit code,
stdout and stderr, so that a test asserts the meaning of initd's answer, not one spelling.

The reference is Gemini CLI's public documentation as shipped in ``@google/gemini-cli@0.61.0``
(``bundle/docs/``, identical to google-gemini/gemini-cli ``docs/`` at git 5411f113,
2026-08-21) and, where the documentation is silent, the hook engine of
``@google/gemini-cli-core@0.61.0`` (``dist/src/hooks/``):

- REFERENCE = https://geminicli.com/docs/hooks/reference (docs/hooks/reference.md)
- HOOKS = https://geminicli.com/docs/hooks/ (docs/hooks/index.md)
- WRITING = https://geminicli.com/docs/hooks/writing-hooks (docs/hooks/writing-hooks.md)
- CONFIGURATION = https://geminicli.com/docs/reference/configuration
- TOOLS = https://geminicli.com/docs/reference/tools
- CORE = @google/gemini-cli-core@0.61.0 dist/src/hooks/*.js (the engine: hookRunner,
  hookPlanner, hookAggregator, hookRegistry)
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.conformance.claude_hooks_support import AS_ROOT, INITD, Session
from tests.conformance.gemini_hooks_answer import Answer, read_answer

__all__ = ["Answer", "read_answer"]

REVISION = "@google/gemini-cli@0.61.0 bundle/docs (= gemini-cli git 5411f113, 2026-08-21)"
REFERENCE = "https://geminicli.com/docs/hooks/reference"
HOOKS = "https://geminicli.com/docs/hooks/"
WRITING = "https://geminicli.com/docs/hooks/writing-hooks"
CONFIGURATION = "https://geminicli.com/docs/reference/configuration"
TOOLS = "https://geminicli.com/docs/reference/tools"
CORE = "@google/gemini-cli-core@0.61.0 dist/src/hooks"
PINNED = "0.61.0"

# HookEventName in @google/gemini-cli-core@0.61.0 dist/src/hooks/types.d.ts
EVENTS = ("SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeModel",
          "AfterModel", "BeforeToolSelection", "BeforeTool", "AfterTool", "PreCompress",
          "Notification")
# the events whose hooks can block (REFERENCE: "Exit Code 2 (Block Tool / Block Result /
# Block Turn / Retry / Block Response)"); SessionStart, SessionEnd, Notification and
# PreCompress are advisory, BeforeToolSelection "does not support decision"
GUARDS = ("BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "BeforeModel",
          "AfterModel")

LLM_REQUEST: dict[str, Any] = {
    "model": "gemini-2.5-pro",
    "messages": [{"role": "user", "content": "delete the build directory"}],
    "config": {"temperature": 1, "topP": 0.95, "topK": 64},
}
LLM_RESPONSE: dict[str, Any] = {
    "candidates": [{"content": {"role": "model", "parts": ["I will run rm -rf build."]},
                    "finishReason": "STOP"}],
    "usageMetadata": {"totalTokenCount": 42},
}

# Each event's own fields, as the reference lists them (and as the real gemini 0.61.0 sent
# them: /work/wt/research/gemini.md, "Real payloads").
FIELDS: dict[str, dict[str, Any]] = {
    "SessionStart": {"source": "startup"},
    "SessionEnd": {"reason": "exit"},
    "BeforeAgent": {"prompt": "delete the build directory"},
    "AfterAgent": {"prompt": "delete the build directory", "prompt_response": "Done.",
                   "stop_hook_active": False},
    "BeforeModel": {"llm_request": LLM_REQUEST},
    "AfterModel": {"llm_request": LLM_REQUEST, "llm_response": LLM_RESPONSE},
    "BeforeToolSelection": {"llm_request": LLM_REQUEST},
    "BeforeTool": {"tool_name": "run_shell_command", "tool_input": {"command": "npm test"}},
    "AfterTool": {"tool_name": "run_shell_command", "tool_input": {"command": "npm test"},
                  "tool_response": {"llmContent": "ok", "returnDisplay": "ok"}},
    "PreCompress": {"trigger": "auto"},
    "Notification": {"notification_type": "ToolPermission",
                     "message": "Tool Shell requires execution",
                     "details": {"type": "exec", "title": "Shell",
                                 "command": "rm -rf build", "rootCommand": "rm"}},
}


def payload(session: Session, event: str, **fields: Any) -> dict[str, Any]:
    """Gemini's whole hook input for ``event`` (REFERENCE "Base input schema": session_id,
    transcript_path, cwd, hook_event_name, timestamp), its fields overridden by ``fields``."""
    return {"session_id": "6f0d1a52-8a0c-4c8e-9d0e-3b1f5e2a7c11",
            "transcript_path": str(session.home / ".gemini" / "tmp" / "ws" / "chats" /
                                   "session-2026-09-25T10-00-6f0d1a52.jsonl"),
            "cwd": str(session.ws), "hook_event_name": event,
            "timestamp": "2026-09-25T10:00:00.000Z", **FIELDS.get(event, {}), **fields}


def tool(session: Session, name: str, event: str = "BeforeTool",
         **tool_input: Any) -> dict[str, Any]:
    """A BeforeTool (or AfterTool) input for the tool ``name`` with ``tool_input``."""
    return payload(session, event, tool_name=name, tool_input=tool_input)


# settings.json -----------------------------------------------------------------------


def hook(command: str, **more: Any) -> dict[str, Any]:
    """A hook configuration (REFERENCE "Hook configuration": type, command, name, timeout
    in milliseconds, description)."""
    return {"type": "command", "command": command, **more}


def group(*hooks: dict[str, Any], matcher: str | None = None,
          sequential: bool | None = None) -> dict[str, Any]:
    """A hook definition (REFERENCE "Hook definition": matcher, sequential, hooks)."""
    out: dict[str, Any] = {"hooks": list(hooks)}
    if matcher is not None:
        out["matcher"] = matcher
    if sequential is not None:
        out["sequential"] = sequential
    return out


def settings(**events: list[dict[str, Any]] | dict[str, Any]) -> dict[str, Any]:
    """``{"hooks": {Event: [definitions]}}``; a single definition may be given bare."""
    return {"hooks": {name: (value if isinstance(value, list) else [value])
                      for name, value in events.items()}}


class GeminiSession(Session):
    """A Session with Gemini CLI's settings files (CONFIGURATION "Settings files")."""

    def gemini_project(self, data: dict[str, Any] | str) -> Path:
        """``.gemini/settings.json`` in the project (the workspace)."""
        return self._put(self.ws / ".gemini" / "settings.json", data)

    def gemini_user(self, data: dict[str, Any] | str) -> Path:
        """``~/.gemini/settings.json``."""
        return self._put(self.home / ".gemini" / "settings.json", data)

    def gemini_system(self, data: dict[str, Any] | str) -> Path:
        """``/etc/gemini-cli/settings.json`` as this session's service sees it."""
        self._need_root()
        return self._put(self.etc_upper / "gemini-cli" / "settings.json", data)

    def gemini_system_defaults(self, data: dict[str, Any] | str) -> Path:
        """``/etc/gemini-cli/system-defaults.json`` as this session's service sees it."""
        self._need_root()
        return self._put(self.etc_upper / "gemini-cli" / "system-defaults.json", data)

    def _need_root(self) -> None:
        if not AS_ROOT:
            import pytest

            pytest.skip("a system settings file of the test's own needs root (a mount "
                        "namespace with /etc as an overlay)")

    def _put(self, path: Path, data: dict[str, Any] | str) -> Path:
        if isinstance(data, str):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(data)
            return path
        return self._write(path, data)

    def gemini(self, data: dict[str, Any], event: str | None = None,
               socket: str | None = None, timeout: float = 120
               ) -> subprocess.CompletedProcess[str]:
        """``initd emit --from gemini [EVENT] --socket S`` with ``data`` on stdin, as
        Gemini CLI runs a hook command."""
        return emit_from("gemini", data, event=event, socket=socket or self.sock,
                         home=self.home, cwd=self.ws, timeout=timeout)

    def ask(self, data: dict[str, Any], event: str | None = None,
            timeout: float = 120) -> Answer:
        """``gemini(data)`` read as Gemini CLI reads a hook's answer."""
        return read_answer(event or str(data["hook_event_name"]),
                           self.gemini(data, event, timeout=timeout))


def emit_from(agent: str, data: dict[str, Any], *, event: str | None, socket: str,
              home: Path, cwd: Path, timeout: float = 120
              ) -> subprocess.CompletedProcess[str]:
    argv = [*INITD, "emit", "--from", agent, *([event] if event else []), "--socket", socket]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INITD_", "GEMINI_"))}
    env["HOME"] = str(home)
    return subprocess.run(argv, input=json.dumps(data), capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=str(cwd))


def exits(code: int, message: str = "") -> str:
    """A hook command body that says ``message`` on stderr and exits ``code``."""
    return (f"echo {json.dumps(message)} >&2; " if message else "") + f"exit {code}"


def says(data: dict[str, Any]) -> str:
    """A hook command body that prints ``data`` as its JSON answer and exits 0."""
    return f"printf '%s' {_sq(json.dumps(data))}"


def _sq(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
