"""What the OpenAI Codex hooks conformance tests share: Codex's own hook files in every
layer, Codex's real payloads, ``initd emit --from codex`` and a reading of its answer by
Codex's rules.

The hook service is claude_hooks_support.Session (a workspace, a HOME, /etc as the test's
own overlay when root). Codex's files: ``<repo>/.codex/hooks.json`` and ``config.toml``,
``~/.codex/hooks.json`` and ``config.toml``, and the managed ``/etc/codex/hooks.json``,
``/etc/codex/config.toml`` and ``/etc/codex/requirements.toml``.

References (quoted in each test's docstring):

- HOOKS = https://developers.openai.com/codex/hooks (as published 2026-05-18, the
  spybara.com snapshot "2026-05-18-2201" of docs/en/hooks, "hooks.md +309 -62").
- SRC = openai/codex, codex-rs/hooks/src (engine/discovery.rs, engine/output_parser.rs,
  events/*.rs, commit 0082977cebb9fbd524046914dbc4305e5b8e0b95; events/common.rs at
  0b9770ed4bc3ddf3025c5c422db1df83addd7f7c; engine/command_runner.rs at
  017466574b7728379ab53e9c279433388c089ff1; config hook_config.rs as indexed).
- CODEX = the published CLI, @openai/codex@0.171.0 (its binary's schemas are vendored in
  contracts/codex/hooks-0.171.0; its behaviour was observed running it, see the e2e test).
- STORE = SchemaStore codex-hooks.json at 26d28a1c58e7f15f03011878bcb6c7fac5fe05db.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

from tests.conformance.claude_hooks_support import INITD, Session, q

HOOKS = "https://developers.openai.com/codex/hooks"
SRC = "https://github.com/openai/codex/tree/0082977cebb9fbd524046914dbc4305e5b8e0b95/codex-rs/hooks"
CODEX_VERSION = "0.171.0"
CONTRACTS = Path(__file__).resolve().parent / "contracts" / "codex"

# Every event of Codex 0.171.0 (its input schemas) and the schema's file stem.
STEMS = {
    "SessionStart": "session-start", "SessionEnd": "session-end",
    "PreToolUse": "pre-tool-use", "PermissionRequest": "permission-request",
    "PostToolUse": "post-tool-use", "PreCompact": "pre-compact",
    "PostCompact": "post-compact", "UserPromptSubmit": "user-prompt-submit",
    "SubagentStart": "subagent-start", "SubagentStop": "subagent-stop", "Stop": "stop",
    "Interrupt": "interrupt",
}
EVENTS = list(STEMS)
# What a hook can refuse (no service at the socket: the refusal, never an allow).
GUARDS = ["PreToolUse", "PermissionRequest", "UserPromptSubmit"]
SESSION_ID = "01a21fcd-eb70-7102-aa8d-679732a01819"
TURN_ID = "01a21fcd-eba4-79f0-8187-c0ce339bf305"


def schema(event: str, kind: str) -> dict[str, Any]:
    """The vendored schema of ``event``'s ``input`` or ``output``."""
    path = CONTRACTS / f"hooks-{CODEX_VERSION}" / f"{STEMS[event]}.command.{kind}.schema.json"
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def store_schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CONTRACTS / "codex-hooks.schemastore.json").read_text())
    return data


def validate(instance: object, against: dict[str, Any]) -> None:
    import jsonschema  # type: ignore[import-untyped]  # (schemathesis brings it)

    jsonschema.Draft7Validator(against).validate(instance)


# Payloads: what Codex 0.171.0 writes to a hook's stdin (its input schemas; SessionStart's
# and UserPromptSubmit's are the ones the real CLI wrote, see test_codex_hooks_e2e).


def payload(event: str, cwd: Path | str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"session_id": SESSION_ID, "transcript_path": None,
                            "cwd": str(cwd), "hook_event_name": event, "model": "gpt-5.5"}
    if event not in ("PreCompact", "PostCompact", "SessionEnd"):
        base["permission_mode"] = "default"
    if event not in ("SessionStart", "SessionEnd"):
        base["turn_id"] = TURN_ID
    if event == "SessionEnd":
        del base["model"]
    base.update(EXTRA.get(event, {}))
    base.update(fields)
    return base


EXTRA: dict[str, dict[str, Any]] = {
    "SessionStart": {"source": "startup"},
    "SessionEnd": {"reason": "other"},
    "PreToolUse": {"tool_name": "Bash", "tool_input": {"command": "npm test"},
                   "tool_use_id": "call_Q1w2E3r4"},
    "PermissionRequest": {"tool_name": "Bash",
                          "tool_input": {"command": "npm test",
                                         "description": "run the tests outside the sandbox"}},
    "PostToolUse": {"tool_name": "Bash", "tool_input": {"command": "npm test"},
                    "tool_response": "2 passing", "tool_use_id": "call_Q1w2E3r4"},
    "PreCompact": {"trigger": "manual"},
    "PostCompact": {"trigger": "auto"},
    "UserPromptSubmit": {"prompt": "Write a function to calculate the factorial"},
    "SubagentStart": {"agent_id": "agent-7", "agent_type": "explorer"},
    "SubagentStop": {"agent_id": "agent-7", "agent_type": "explorer",
                     "agent_transcript_path": None, "stop_hook_active": False,
                     "last_assistant_message": "Analysis complete."},
    "Stop": {"stop_hook_active": False, "last_assistant_message": "Done."},
    "Interrupt": {},
}


def bash(cwd: Path | str, command: str, event: str = "PreToolUse") -> dict[str, Any]:
    """Codex's shell tool as hooks see it: ``tool_name`` "Bash", ``tool_input.command``."""
    return payload(event, cwd, tool_name="Bash", tool_input={"command": command})


def patch_adding(cwd: Path | str, relpath: str, text: str = "X=1") -> dict[str, Any]:
    """An ``apply_patch`` PreToolUse (matcher aliases "Write" and "Edit"): the patch
    envelope in ``tool_input.command``."""
    body = "".join(f"+{line}\n" for line in text.splitlines())
    envelope = f"*** Begin Patch\n*** Add File: {relpath}\n{body}*** End Patch\n"
    return payload("PreToolUse", cwd, tool_name="apply_patch",
                   tool_input={"command": envelope})


# Hook files ------------------------------------------------------------------------


def handler(command: str, **more: Any) -> dict[str, Any]:
    return {"type": "command", "command": command, **more}


def hooks_file(**events: list[dict[str, Any]] | dict[str, Any]) -> dict[str, Any]:
    """``{"hooks": {Event: [matcher groups]}}``; a group may be given bare."""
    return {"hooks": {name: (v if isinstance(v, list) else [v]) for name, v in events.items()}}


def group(*handlers: dict[str, Any], matcher: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"hooks": list(handlers)}
    if matcher is not None:
        out["matcher"] = matcher
    return out


LAYERS = ("project", "user", "managed")


def codex_dir(s: Session, layer: str) -> Path:
    """The folder of a config layer: <repo>/.codex, $HOME/.codex, /etc/codex (as this
    session's service sees /etc)."""
    if layer == "managed":
        import pytest

        if os.geteuid() != 0:
            pytest.skip("a managed /etc/codex of the test's own needs root (an overlay)")
        return s.etc_upper / "codex"
    return {"project": s.ws, "user": s.home}[layer] / ".codex"


def write_json(s: Session, layer: str, data: dict[str, Any] | str) -> Path:
    path = codex_dir(s, layer) / "hooks.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def write_toml(s: Session, layer: str, text: str, name: str = "config.toml") -> Path:
    path = codex_dir(s, layer) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def toml_hook(event: str, command: str, matcher: str | None = None,
              timeout: int | None = None, prefix: str = "hooks") -> str:
    """One inline ``[[hooks.<Event>]]`` matcher group of config.toml (or requirements.toml)."""
    lines = [f"[[{prefix}.{event}]]"]
    if matcher is not None:
        lines.append(f"matcher = {json.dumps(matcher)}")
    lines += [f"[[{prefix}.{event}.hooks]]", 'type = "command"',
              f"command = {json.dumps(command)}"]
    if timeout is not None:
        lines.append(f"timeout = {timeout}")
    return "\n".join(lines) + "\n"


def deny(reason: str) -> str:
    """A shell command that blocks by Codex's rule for PreToolUse: exit 2, reason on stderr."""
    return f"cat >/dev/null; echo {q(reason)} >&2; exit 2"


def prints(obj: object) -> str:
    """A shell command that answers ``obj`` as JSON on stdout, exit 0."""
    return f"cat >/dev/null; printf '%s\\n' {q(json.dumps(obj))}"


# initd emit --from codex ------------------------------------------------------------


def emit(s: Session, data: dict[str, Any] | str, event: str | None = None,
         agent: str = "codex", socket: str | None = None,
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``initd emit --from AGENT [EVENT]`` with the agent's payload on stdin."""
    argv = [*INITD, "emit", "--from", agent, *([event] if event else [])]
    env = {**os.environ, "HOME": str(s.home), "INITD_SOCKET": s.sock}
    if socket is not None:
        argv += ["--socket", socket]
        env.pop("INITD_SOCKET")
    text = data if isinstance(data, str) else json.dumps(data)
    return subprocess.run(argv, input=text, capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=str(s.ws))


def fresh_id() -> str:
    return str(uuid.uuid4())
