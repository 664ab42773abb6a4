"""discobot scripts whose front matter names an event (``type: pre_tool``): run directly
(their shebang), the event as JSON on stdin, with the event-hook fields of the other
dialects (``block``, ``tool_name``, ``pattern``, ``when``, ``on_failure``, ``on_error``)."""

from __future__ import annotations

import os

from initd.config import paths
from initd.events.dialect import InitdRules, Where
from initd.events.loading import Collected, EventFields, named
from initd.events.model import BLOCKABLE, EVERY, EventHook, Script, StandIn
from initd.hooks import discovery
from initd.hooks.kinds import TYPES
from initd.hooks.model import Hook

NAME = "discobot"


def load(workspace: str, image_dir: str) -> Collected:
    found = Collected(NAME)
    discovered = discovery.for_workspace(workspace, image_dir)
    for problem in discovered.unread:  # a guard may be among what was not read
        found.unread.append(StandIn(problem.path, problem.reason, EVERY))
    ours = paths.workspace_hooks(workspace)
    for problem in discovered.problems:  # the workspace's directory not listed (EACCES; a
        if problem.path == ours and problem not in discovered.unread:  # failed snapshot)
            found.unread.append(StandIn(problem.path, problem.reason, EVERY))
    for broken in discovered.broken:  # a guard may be among what did not load
        event = standing(broken, image_dir)
        if event is not None:
            found.unread.append(StandIn(broken.problem.path, str(broken.problem), event))
    for hook in discovered.hooks:
        if not hook.is_event:
            continue
        found.hook(hook.path, _hook, hook, image_dir, event=hook.type)
    return found


def standing(broken: discovery.Broken, image_dir: str) -> str | None:
    """What a broken hook file stands in on: the event its ``type`` names; every
    blockable event when that is not known (its front matter did not parse, has no
    type, or the file could not be read); None when it is plainly no event hook (a
    session, file or pre-commit hook, a name no event has), or an image hook the agent
    may not read (root's session hooks: not the agent's service's to see)."""
    if not broken.read:
        return None if os.path.dirname(broken.problem.path) == image_dir else BLOCKABLE
    if broken.type in TYPES:
        return None
    return named(broken.type)


def _hook(hook: Hook, image_dir: str) -> EventHook:
    key = f"front matter of hook {hook.name!r}"
    f = EventFields(dict(hook.options), hook.path, key)
    return EventHook(
        event=hook.type, dialect=NAME, source=hook.path, key=key,
        label=hook.name, spec=Script(hook.path, hook.id), timeout=hook.timeout,
        wait=True, when=f.condition("when"),
        on_failure=f.choice("on_failure", ("continue", "abort", "retry"), "continue"),
        retries=int(f.number("retries", 0, positive=False, whole=True)),
        retry_delay=f.number("retry_delay", 5.0, positive=False),
        block=f.flag("block", False), on_error=f.choice("on_error", ("allow", "deny"), "allow"),
        tool_name=f.names("tool_name"), pattern=(hook.pattern,) if hook.pattern else (),
        limits=hook.limits,
        workspace=hook.directory != image_dir)


class Discobot(InitdRules):
    """discobot scripts whose ``type`` is an event: initd's own rules."""

    name = NAME
    title = "discobot"

    def load(self, where: Where) -> Collected:
        return load(where.workspace, where.image_dir)

    def files(self, where: Where) -> list[str]:
        """The two hooks directories, and each script in them (one edited in place)."""
        found = []
        for directory in (where.image_dir, paths.workspace_hooks(where.workspace)):
            found.append(directory)
            try:
                names, _ = discovery.listing(directory)  # (bounded, as discovery reads)
            except OSError:
                continue
            found += [os.path.join(directory, n) for n in names]
        return found


DIALECT = Discobot()
