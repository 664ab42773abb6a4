"""discobot scripts whose front matter names an event (``type: pre_tool``): run directly
(their shebang), the event as JSON on stdin, with the event-hook fields of the other
dialects (``block``, ``tool_name``, ``pattern``, ``when``, ``on_failure``, ``on_error``)."""

from __future__ import annotations

from initd.events.dialects.common import Collected, Fields
from initd.events.model import EventHook, Script
from initd.hooks import discovery
from initd.hooks.model import Hook


def load(workspace: str, image_dir: str) -> Collected:
    found = Collected()
    discovered = discovery.for_workspace(workspace, image_dir)
    for problem in discovered.unread:  # a guard may be among what was not read
        found.unread.append((problem.path, problem.reason))
    for hook in discovered.hooks:
        if not hook.is_event:
            continue
        found.hook(hook.path, _hook, hook, image_dir)
    return found


def _hook(hook: Hook, image_dir: str) -> EventHook:
    f = Fields(dict(hook.options), hook.path, f"front matter of hook {hook.name!r}")
    return EventHook(
        event=hook.type, dialect="discobot", source=hook.path, key=f.key,
        label=hook.name, spec=Script(hook.path, hook.id), timeout=hook.timeout,
        wait=True, when=f.condition("when"),
        on_failure=f.choice("on_failure", ("continue", "abort", "retry"), "continue"),
        retries=int(f.number("retries", 0, positive=False, whole=True)),
        retry_delay=f.number("retry_delay", 5.0, positive=False),
        block=f.flag("block", False), on_error=f.choice("on_error", ("allow", "deny"), "allow"),
        tool_name=f.names("tool_name"), pattern=(hook.pattern,) if hook.pattern else (),
        limits=hook.limits,
        workspace=hook.directory != image_dir)
