"""File hooks at the end of a turn: discobot's hooks spec's ``evaluateFileHooks()``, step by step.

1. find the files changed since the ``.last-eval`` marker (first run: every dirty file);
2. mark the file hooks whose pattern matches one of them as pending (status.json);
3. always advance the marker, to the moment the evaluation started, so that edits made
   while hooks run (an auto-fixer's, the agent's) count next time;
4. run the pending hooks in discovery order, each against every dirty file its pattern
   matches (none: no longer pending); success: no longer pending; the first failure stops
   the evaluation, and asks for a re-prompt when the hook has ``notify_llm``. A hook
   initd refuses to run (not trusted, a root hook changed since boot) is no failure the
   model could fix: it stays pending, its result says why, and the others go on.
A cancel (a new user message) stops the running hook's group; pending hooks stay pending.

Modified "since the marker" means an mtime at or after it: the file system's clock is
coarse (a few ms), and a write in the marker's own tick is counted again rather than
risk missing one written just after it. The spec's 200 ms pause after a turn keeps that
from happening in practice.
"""

from __future__ import annotations

import enum
import json
import os
import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple

from initd.hooks import changes, patterns
from initd.hooks.context import HookContext
from initd.hooks.launch import run_one
from initd.hooks.model import Hook
from initd.hooks.status.schema import Status
from initd.hooks.status.store import StatusStore
from initd.process.runner import Result
from initd.state.clock import now_iso


class Action(enum.StrEnum):
    """What a turn's evaluation concluded (the turn answer's ``evaluation``)."""

    NONE = "none"  # all clear
    REPROMPT = "reprompt"  # a hook failed that tells the agent (notify_llm)
    STOPPED = "stopped"  # a hook failed quietly (notify_llm: false)
    CANCELLED = "cancelled"  # a new user message, or initd stopping


class Ran(NamedTuple):
    hook: Hook
    files: tuple[str, ...]
    result: Result


class Evaluation(NamedTuple):
    action: Action
    ran: tuple[Ran, ...]
    pending: tuple[str, ...]  # still pending afterwards

    @property
    def failed(self) -> Ran | None:
        return self.ran[-1] if self.ran and not self.ran[-1].result.ok else None


Gate = Callable[[Hook, Callable[[], Result]], Result]  # runs the hook, or says why not


def evaluate(hooks: Sequence[Hook], ctx: HookContext,
             cancel: threading.Event | None = None, gate: Gate | None = None) -> Evaluation:
    """One turn's evaluation. ``gate`` (a turn's journal: service/core.py) is given each
    hook and what runs it, and decides: it runs it once per turn, however often the
    turn is sent."""
    file_hooks = [hook for hook in hooks if hook.type == "file"]
    known = {hook.id for hook in file_hooks}
    store = ctx.store
    if not file_hooks:  # nothing to evaluate (and no git to ask: any workspace will do)
        if store.read()["pendingHooks"]:
            store.update(lambda status: status.update(pendingHooks=[]))  # all removed
        return Evaluation(Action.NONE, (), ())
    # The new marker is made first: its mtime is the file system's own "now", the clock
    # the files' mtimes come from (a time.time() could be ahead of the coarse fs clock).
    store.new_marker()
    dirty = changes.dirty_files(ctx.workspace)
    since = store.marker_ns()  # None on the first run: every uncommitted change
    changed = dirty if since is None else changes.changed_since(ctx.workspace, since, dirty)
    matched = [hook.id for hook in file_hooks
               if changed and patterns.matching(hook.pattern or "", changed)]

    def mark(status: Status) -> None:
        pending = [hook_id for hook_id in status["pendingHooks"] if hook_id in known]
        status["pendingHooks"] = pending + [h for h in matched if h not in pending]
        status["lastEvaluatedAt"] = now_iso()
    pending = store.update(mark)["pendingHooks"]
    store.advance_marker()  # always advanced, to when this evaluation began

    ran: list[Ran] = []
    for hook in file_hooks:
        if hook.id not in pending:
            continue
        if cancel is not None and cancel.is_set():
            return Evaluation(Action.CANCELLED, tuple(ran), tuple(_pending(store)))
        files = patterns.matching(hook.pattern or "", dirty)
        if not files:
            _done(store, hook.id)
            continue
        def go(hook: Hook = hook, files: Sequence[str] = files) -> Result:
            return run_file_hook(hook, files, ctx, cancel)
        result = go() if gate is None else gate(hook, go)
        ran.append(Ran(hook, tuple(files), result))
        if result.cancelled:
            return Evaluation(Action.CANCELLED, tuple(ran), tuple(_pending(store)))
        if result.refused:
            continue  # a person must act (trust, a restart), not the model: it stays
            # pending, recorded with why, and the other hooks go on
        if result.ok:
            _done(store, hook.id)
            continue
        action = Action.REPROMPT if hook.notify_llm else Action.STOPPED
        return Evaluation(action, tuple(ran), tuple(_pending(store)))
    return Evaluation(Action.NONE, tuple(ran), tuple(_pending(store)))


def run_file_hook(hook: Hook, files: Sequence[str], ctx: HookContext,
                  cancel: threading.Event | None = None) -> Result:
    """One file hook against ``files``, with every input docs/discobot-hooks.md ("File
    hooks") gives it."""
    return run_one(hook, ctx, stdin=_payload(hook, files, ctx), cancel=cancel,
                   extra_env=_env(hook, files, ctx))


def run_on_dirty(hook: Hook, ctx: HookContext,
                 cancel: threading.Event | None = None) -> Result:
    """A file hook outside an evaluation (a rerun): against every dirty file its pattern
    matches, as an evaluation would run it."""
    files = patterns.matching(hook.pattern or "", changes.dirty_files(ctx.workspace))
    return run_file_hook(hook, files, ctx, cancel)


def _env(hook: Hook, files: Sequence[str], ctx: HookContext) -> dict[str, str]:
    """``DISCOBOT_CHANGED_FILES`` space-separated, as discobot's hooks spec says (so it breaks on
    spaces, there); ``DISCOBOT_CHANGED_FILES_LIST``: a NUL-separated file that does not."""
    listing = ctx.store.write_list(hook.id, b"".join(os.fsencode(path) + b"\0"
                                                     for path in files))
    return {"DISCOBOT_CHANGED_FILES": " ".join(files), "DISCOBOT_CHANGED_FILES_LIST": listing}


def _payload(hook: Hook, files: Sequence[str], ctx: HookContext) -> bytes:
    return json.dumps({"hook": hook.id, "name": hook.name, "pattern": hook.pattern,
                       "files": list(files), "workspace": ctx.workspace,
                       "sessionId": ctx.session_id}).encode()


def _done(store: StatusStore, hook_id: str) -> None:
    def drop(status: Status) -> None:
        status["pendingHooks"] = [h for h in status["pendingHooks"] if h != hook_id]
    store.update(drop)


def _pending(store: StatusStore) -> list[str]:
    return list(store.read()["pendingHooks"])
