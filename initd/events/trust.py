"""Trust in the workspace's event hooks (initd/hooks/trust.py has the store and the
scripts): a config hook's hash covers its event, action, fields and condition (and a Claude
Code hook's matcher and ``if``), and the file it is written in; a script is hashed as a
script."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from initd.events.model import EventHook
from initd.hooks.model import Hook
from initd.hooks.trust import Entry, for_script


def for_event_hook(hook: EventHook) -> Entry | None:
    if hook.action == "script":
        return for_script(hook.source)
    what: list[Any] = [hook.dialect, hook.source, hook.key, hook.event, hook.action,
                       hook.spec._asdict(), hook.timeout, hook.wait,
                       hook.when.text if hook.when else None,
                       hook.on_failure, hook.retries, hook.retry_delay, hook.block,
                       hook.on_error, hook.tool_name, hook.pattern, hook.stage]
    if hook.matcher is not None:  # (only Claude Code's have one: no other hash changes)
        what.append([hook.matcher.text, hook.matcher.rule])
    digest = hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()
    return Entry(f"{hook.source}#{hook.key}", digest, f"{hook.label} ({hook.where})")


def workspace_entries(hooks: Iterable[Hook], events: Iterable[EventHook],
                      image_dir: str) -> list[Entry]:
    """Every hook the workspace defines: scripts of every type, and config hooks."""
    entries = [for_script(h.path) for h in hooks if h.directory != image_dir]
    entries += [for_event_hook(h) for h in events if h.workspace and h.action != "script"]
    return [e for e in entries if e is not None]
