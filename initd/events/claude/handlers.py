"""A Claude Code command or http hook's own fields (https://code.claude.com/docs/en/hooks,
"Command hook fields" and "HTTP hook fields", the revision of 2026-08-22): the spec initd
runs, or a LoadError naming the key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from initd.errors import shown
from initd.events.loading import EventFields
from initd.events.model import Command, Exec, HttpHook


def command(f: EventFields, workspace: str, shell: str) -> Command | Exec:
    """Shell form (``sh -c``-like, by ``shell``), or exec form when ``args`` is present:
    "``command`` as an executable on ``PATH`` ... spawns it directly with ``args`` as the
    argument vector", placeholders substituted as plain strings."""
    command = f.text("command", required=True)
    args = f.get("args")
    if args is not None:
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise f.error("args", "expected a list of strings (each one argument)")
        f.get("shell")
        fill = placeholders(workspace)
        return Exec(fill(command), tuple(fill(a) for a in args))
    # "powershell" ("runs the command via PowerShell on Windows") is a load error: never
    # run with another shell, it stands in on its event as an error
    return Command(command, f.choice("shell", ("bash", "sh"), shell))


def placeholders(workspace: str) -> Any:
    def fill(text: str) -> str:
        return text.replace("${CLAUDE_PROJECT_DIR}", workspace).replace(
            "$CLAUDE_PROJECT_DIR", workspace)
    return fill


def http(f: EventFields) -> HttpHook:
    url = f.text("url", required=True)
    if not url.startswith(("http://", "https://")):
        raise f.error("url", f"expected an http:// or https:// URL, got {shown(url, 60)}")
    headers = f.get("headers") or {}
    if not isinstance(headers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise f.error("headers", "expected a mapping of header name: text")
    if any(c in f"{k}{v}" for k, v in headers.items() for c in "\r\n\0"):
        raise f.error("headers", "a header name or value may not hold a line break")
    allowed = f.get("allowedEnvVars") or []
    if not isinstance(allowed, list) or not all(isinstance(a, str) for a in allowed):
        raise f.error("allowedEnvVars", "expected a list of variable names")
    return HttpHook(url, dict(headers), tuple(allowed))
