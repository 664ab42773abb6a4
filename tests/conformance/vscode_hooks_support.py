"""What the VS Code (Local harness) hooks conformance tests share: VS Code's hook files in
their scopes, the payloads the Local harness writes to a hook, and ``initd emit --from
vscode`` run as a VS Code hook is. ``read_answer`` (vscode_hooks_answers) reads initd's
answer as VS Code reads a hook's.

The hook service is claude_hooks_support.Session (a HOME of its own; as root an /etc of
its own, where ``/etc/vscode/policy.json`` is the test's). Only initd's public interface
is used. The references (research: /work/wt/research/vscode.md):

- HOOKS = https://code.visualstudio.com/docs/agent-customization/hooks (microsoft/vscode-docs
  docs/agent-customization/hooks.md, DateApproved 9/16/2026)
- LOCAL = https://code.visualstudio.com/docs/agents/reference/hooks-reference ("Local hooks
  reference", DateApproved 9/16/2026)
- HOOKS_JUNE = the same hooks page, DateApproved 6/3/2026 (vscode-docs @ 91e74cb2)
- ENTERPRISE = https://code.visualstudio.com/docs/enterprise/ai-settings (3/25/2026);
  POLICIES = https://code.visualstudio.com/docs/enterprise/policies ("Linux JSON policies")
- SRC = the Local harness, microsoft/vscode extensions/copilot (chatHookService.ts @ 465ebdf6,
  hookExecutor.ts @ 024adbf3, toolCallingLoop.ts @ 01808b5f, toolNames.ts @ 04dc7dc6) and
  src/vs/workbench/contrib/chat/common/promptSyntax/hookSchema.ts @ 01272b92
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conformance.claude_hooks_support import AS_ROOT, Session, q

HOOKS = "https://code.visualstudio.com/docs/agent-customization/hooks (2026-09-16)"
LOCAL = "https://code.visualstudio.com/docs/agents/reference/hooks-reference (2026-09-16)"
HOOKS_JUNE = "https://code.visualstudio.com/docs/agent-customization/hooks (2026-06-03)"
ENTERPRISE = "https://code.visualstudio.com/docs/enterprise/ai-settings (2026-03-25)"
POLICIES = "https://code.visualstudio.com/docs/enterprise/policies (Linux JSON policies)"
SRC = "microsoft/vscode extensions/copilot chatHookService.ts @ 465ebdf6"

CONTRACTS = Path(__file__).resolve().parent / "contracts" / "vscode"
INITD = [sys.executable, "-m", "initd"]

# LOCAL, "Local hook lifecycle events"; hookTypes.ts HOOKS_BY_TARGET[Target.VSCode].
EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact",
          "SubagentStart", "SubagentStop", "Stop"]
# The guard-capable ones and what blocks there (vscode_hooks_answers.blocked).
GUARDS = ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop"]

# SRC toolNames.ts: the model-facing names a hook gets in tool_name.
SHELL, CREATE, EDIT, READ = "run_in_terminal", "create_file", "replace_string_in_file", "read_file"

SESSION_ID = "3f1c9a2e-7b4d-4e8a-9c21-5d6e7f8a9b0c"
TRANSCRIPT = "/home/dev/.config/Code/User/workspaceStorage/abc/transcripts/3f1c9a2e.jsonl"


def common(event: str, cwd: str = "/workspaces/app") -> dict[str, Any]:
    """LOCAL, "Common input": timestamp, cwd, session_id, hook_event_name, transcript_path
    (SRC: ``commonInput = { timestamp, hook_event_name, session_id, transcript_path }``)."""
    return {"timestamp": "2026-09-16T10:30:00.000Z", "cwd": cwd, "session_id": SESSION_ID,
            "hook_event_name": event, "transcript_path": TRANSCRIPT}


# Each event's own fields, the reference's examples (LOCAL, each event's "Input"); the tool
# ones use the Local tools' real names and arguments (SRC toolNames.ts, runInTerminalTool).
FIELDS: dict[str, dict[str, Any]] = {
    "PreToolUse": {"tool_name": SHELL, "tool_use_id": "tool-123",
                   "tool_input": {"command": "npm test", "explanation": "Run the tests",
                                  "goal": "Check the change", "isBackground": False,
                                  "timeout": 0}},
    "PostToolUse": {"tool_name": CREATE, "tool_use_id": "tool-124",
                    "tool_input": {"filePath": "/workspaces/app/src/a.ts", "content": "x"},
                    "tool_response": "The following files were successfully edited: a.ts"},
    "UserPromptSubmit": {"prompt": "Add input validation to the sign-up form."},
    "SessionStart": {"source": "new", "model": "gpt-5", "agent_type": "agent"},
    "Stop": {"stop_hook_active": False},
    "SubagentStart": {"agent_id": "subagent-456", "agent_type": "Plan"},
    "SubagentStop": {"agent_id": "subagent-456", "agent_type": "Plan",
                     "stop_hook_active": False},
    "PreCompact": {"trigger": "auto"},
}


def payload(event: str, cwd: str = "/workspaces/app", **fields: Any) -> dict[str, Any]:
    """The JSON the Local harness writes to an ``event`` hook (common fields first, SRC)."""
    return {**common(event, cwd), **FIELDS[event], **fields}


def tool(name: str, tool_input: dict[str, Any], event: str = "PreToolUse",
         **more: Any) -> dict[str, Any]:
    """A PreToolUse (or PostToolUse) payload for one of the Local tools."""
    data = payload(event, tool_name=name, tool_input=tool_input, **more)
    if event == "PreToolUse":
        data.pop("tool_response", None)
    return data


def shell(command: str) -> dict[str, Any]:
    """run_in_terminal: {command, explanation, goal, isBackground, timeout} (SRC
    IRunInTerminalInputParams)."""
    return tool(SHELL, {"command": command, "explanation": "Run a command",
                        "goal": "Do the task", "isBackground": False, "timeout": 0})


def create(path: str, content: str = "SECRET=1\n") -> dict[str, Any]:
    """create_file: {filePath, content} (SRC, copilot_createFile's inputSchema)."""
    return tool(CREATE, {"filePath": path, "content": content})


def edit(path: str, old: str = "a", new: str = "b") -> dict[str, Any]:
    """replace_string_in_file: {filePath, oldString, newString} (SRC)."""
    return tool(EDIT, {"filePath": path, "oldString": old, "newString": new,
                       "explanation": "Change it"})


def cmd(text: str, **more: Any) -> dict[str, Any]:
    """A native command entry (LOCAL, "Command properties")."""
    return {"type": "command", "command": text, **more}


def vhooks(**events: list[dict[str, Any]] | dict[str, Any]) -> dict[str, Any]:
    """A native Local hook file: ``{"hooks": {Event: [command, ...]}}`` (no matcher
    groups; LOCAL, "Configuration format"). A single command may be given bare."""
    return {"hooks": {name: (value if isinstance(value, list) else [value])
                      for name, value in events.items()}}


def exits(code: int, say: str = "", out: str = "") -> str:
    """A hook command: reads stdin, prints ``out`` on stdout and ``say`` on stderr, exits
    ``code``."""
    parts = ["cat >/dev/null"]
    if out:
        parts.append(f"printf '%s' {q(out)}")
    if say:
        parts.append(f"echo {q(say)} >&2")
    parts.append(f"exit {code}")
    return "; ".join(parts)


def answers(data: dict[str, Any]) -> str:
    """A hook command that answers ``data`` as JSON on stdout, exit 0."""
    return exits(0, out=json.dumps(data))


class VSCode:
    """VS Code's hook files and settings for a claude_hooks_support.Session."""

    def __init__(self, session: Session) -> None:
        self.s = session

    def workspace(self, name: str, data: dict[str, Any]) -> Path:
        """.github/hooks/<name>.json (HOOKS, "Local hook file locations": Workspace)."""
        return self.s._write(self.s.ws / ".github" / "hooks" / f"{name}.json", data)

    def user(self, name: str, data: dict[str, Any]) -> Path:
        """~/.copilot/hooks/<name>.json (HOOKS: User)."""
        return self.s._write(self.s.home / ".copilot" / "hooks" / f"{name}.json", data)

    def user_settings(self, data: dict[str, Any]) -> Path:
        """VS Code's user settings.json on Linux (~/.config/Code/User/settings.json)."""
        return self.s._write(self.s.home / ".config" / "Code" / "User" / "settings.json", data)

    def policy(self, data: dict[str, Any]) -> Path:
        """/etc/vscode/policy.json as this session's service sees it (POLICIES)."""
        if not AS_ROOT:
            import pytest

            pytest.skip("a policy file of the test's own needs root (an /etc overlay)")
        return self.s._write(self.s.etc_upper / "vscode" / "policy.json", data)

    def emit(self, data: dict[str, Any] | str, event: str | None = None,
             socket: str | None = None, env: dict[str, str] | None = None,
             timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``initd emit --from vscode [EVENT]`` with ``data`` on stdin, as the Local
        harness runs a hook (SRC hookExecutor: JSON on stdin, stdout/stderr/exit read)."""
        argv = [*INITD, "emit", "--from", "vscode", *([event] if event else [])]
        run_env = {k: v for k, v in os.environ.items() if not k.startswith("INITD_")}
        run_env.update({"HOME": str(self.s.home), "INITD_SOCKET": socket or self.s.sock,
                        **(env or {})})
        text = data if isinstance(data, str) else json.dumps(data)
        return subprocess.run(argv, input=text, capture_output=True, text=True,
                              timeout=timeout, env=run_env, cwd=str(self.s.ws))

    def emit_claude(self, data: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        """``initd emit --from claude`` (Claude Code's payload on stdin)."""
        run_env = {k: v for k, v in os.environ.items() if not k.startswith("INITD_")}
        run_env.update({"HOME": str(self.s.home), "INITD_SOCKET": self.s.sock})
        return subprocess.run([*INITD, "emit", "--from", "claude"], input=json.dumps(data),
                              capture_output=True, text=True, timeout=120, env=run_env,
                              cwd=str(self.s.ws))


def schema(name: str, event: str | None = None) -> dict[str, Any]:
    """A vendored JSON Schema (contracts/vscode), or one event's definition of it."""
    data: dict[str, Any] = json.loads((CONTRACTS / f"{name}.schema.json").read_text())
    if event is None:
        return data
    return {"$schema": data["$schema"], **data["definitions"][event],
            "definitions": data.get("definitions", {})}


def validate(instance: Any, against: dict[str, Any]) -> None:
    import jsonschema  # type: ignore[import-untyped]  # (a dev dependency)

    jsonschema.Draft7Validator(against).validate(instance)
