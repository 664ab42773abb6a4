"""AutoAgent's ``.autoagent/config.json`` ``hooks`` (its hooks design), merged over the user's
``~/.autoagent/config.json``: per event, the workspace's list replaces the user's. Hook
types ``command`` (``blocking``, ``timeout`` in ms, 60 s by default), and the built-in
``git-commit`` (``message``, ``noVerify``) and ``git-push`` (``remote``, ``branch``).
``set_auto`` is ``initd config set-auto-commit|set-auto-push``."""

from __future__ import annotations

import json
import os
from typing import Any

from initd.config.problems import LoadError
from initd.events import sources
from initd.events.actions import Call
from initd.events.dialect import InitdRules, Where, initd_input, own_name
from initd.events.loading import Collected, EventFields, read
from initd.events.model import EventHook, GitCommit, GitPush, Shell

NAME = "autoagent"

DEFAULT_TIMEOUT_MS = 60_000
COMMIT_MESSAGE = "Complete issue #{{issueNumber}}: {{issueTitle}}"
TYPES = ("command", "git-commit", "git-push")


def files(workspace: str, home: str) -> list[tuple[str, bool]]:
    """(path, written by the workspace): the user's, then the workspace's."""
    return sources.owned(NAME, workspace, home)


def workspace_file(workspace: str) -> str:
    return files(workspace, "")[-1][0]


def load(workspace: str, home: str) -> Collected:
    found = Collected(NAME)
    by_event: dict[str, tuple[str, str, list[Any], bool]] = {}  # event -> (path, key, ..)
    for path, in_workspace in files(workspace, home):
        data = found.read(path, "json")
        if data is None:
            continue
        hooks = data.get("hooks") if isinstance(data, dict) else None
        if hooks is None:
            continue
        for event, key, entries in found.events(path, hooks, "hooks"):
            by_event[event.name] = (path, key, entries, in_workspace)  # the workspace wins
    for event_name, (path, key, entries, in_workspace) in by_event.items():
        for index, entry in enumerate(entries):
            found.hook(path, _hook, event_name, entry, path, f"{key}[{index}]", in_workspace,
                       event=event_name)
    return found


def _hook(event: str, entry: object, path: str, key: str, in_workspace: bool) -> EventHook:
    f = EventFields(entry, path, key)
    kind = f.choice("type", TYPES, "command")
    common: dict[str, Any] = dict(
        event=event, dialect=NAME, source=path, key=key, wait=True,
        timeout=f.number("timeout", DEFAULT_TIMEOUT_MS / 1000, scale=1 / 1000),
        block=f.flag("blocking", False), on_error=f.choice("on_error", ("allow", "deny"),
                                                           "allow"),
        workspace=in_workspace)
    if kind == "command":
        command = f.command("command")
        return EventHook(label=command, spec=Shell(command),
                         warnings=f.unknown(), **common)
    if kind == "git-commit":
        message = f.text("message", COMMIT_MESSAGE, required=False)
        return EventHook(label=f"git commit -m {message!r}",
                         spec=GitCommit(message, f.flag("noVerify", False)),
                         warnings=f.unknown(), **common)
    remote, branch = f.text("remote", "origin"), f.text("branch", "current")
    return EventHook(label=f"git push {remote} {branch}",
                     spec=GitPush(remote, branch), warnings=f.unknown(),
                     **common)


def set_auto(workspace: str, kind: str, enabled: bool) -> str:
    """``set-auto-commit`` (kind git-commit) / ``set-auto-push`` (git-push): add or remove
    that built-in hook in PostExecutionEnd of the workspace's config (a push goes after
    the commit). Everything else in the file is kept. Returns what was done."""
    path = workspace_file(workspace)
    data = read(path, "json")
    if data is None:
        data = {}
    if not isinstance(data, dict) or not isinstance(data.setdefault("hooks", {}), dict):
        raise LoadError("expected an object with a hooks object", path)
    entries = data["hooks"].setdefault("PostExecutionEnd", [])
    if not isinstance(entries, list):
        raise LoadError("expected a list of hooks", path, "hooks.PostExecutionEnd")
    present = [e for e in entries if isinstance(e, dict) and e.get("type") == kind]
    if enabled == bool(present):
        return f"{kind} hook already {'in' if enabled else 'absent from'} PostExecutionEnd"
    if enabled:
        hook = ({"type": "git-commit", "message": COMMIT_MESSAGE} if kind == "git-commit"
                else {"type": "git-push", "remote": "origin", "branch": "current"})
        if kind == "git-commit":
            pushes = [i for i, e in enumerate(entries)
                      if isinstance(e, dict) and e.get("type") == "git-push"]
            entries.insert(pushes[0] if pushes else len(entries), hook)
        else:
            entries.append(hook)
    else:
        entries[:] = [e for e in entries if e not in present]
    # Through agentfs, as whoever runs this (the agent, or root from a shell): no link on
    # the way followed, a random temp name, the file the workspace owner's.
    from initd.state.agentfs import Place

    info = os.stat(workspace)
    place = Place(workspace, (os.path.basename(os.path.dirname(path)),),
                  owner=(info.st_uid, info.st_gid))
    with place.open(create=True) as where:
        where.write(os.path.basename(path), (json.dumps(data, indent=2) + "\n").encode())
    return f"{'added' if enabled else 'removed'} the {kind} hook in PostExecutionEnd ({path})"


class AutoAgent(InitdRules):
    """initd's rules; its hooks read the event's name as the config writes it
    (``PreToolUse``)."""

    name = NAME
    title = "AutoAgent"

    def load(self, where: Where) -> Collected:
        return load(where.workspace, where.home)

    def files(self, where: Where) -> list[str]:
        return [path for path, _ in files(where.workspace, where.home)]

    def stdin(self, call: Call) -> dict[str, Any]:
        return initd_input(call, own_name(call))


DIALECT = AutoAgent()
