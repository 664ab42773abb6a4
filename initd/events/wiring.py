"""An engine for a hook context (the hook service's): the dialects' cache, the session
record, the events' state directory and the hooks' EventContext."""

from __future__ import annotations

import os

from initd.events import dialects, records
from initd.events.context import EventContext, pipeline_secrets
from initd.events.engine import Engine
from initd.hooks.context import HookContext
from initd.process import spawn
from initd.process.spec import HOOK_ENV
from initd.state.snapshot import Snapshot


def for_context(ctx: HookContext, image_dir: str, command: list[str] | None = None,
                guards: Snapshot | None = None) -> Engine:
    """The engine, its hooks from ``guards`` (the session's guard snapshot, root's under
    initd; taken now when None: guardset.py)."""
    opened = records.Sessions(ctx.state, ctx.session_id, ctx.workspace)
    record: records.Sessions | None = opened
    try:
        for name in opened.open(command):
            ctx.log.warning("an event's hooks were running when the service stopped: "
                            "recorded as interrupted", name=name)
    except OSError as err:
        if ctx.state_problem is None:  # (else said once, at boot)
            ctx.log.error("no session record: it cannot be written", error=str(err))
        record = None
    events = ctx.state.child(ctx.session_id, "events")
    try:
        events.open(create=True).close()  # ~/.discobot/<session>/events, never via a link
    except OSError as err:  # a spawn there fails, saying why; every other action runs
        if ctx.state_problem is None:
            ctx.log.error("no events directory: spawned children cannot be kept",
                          error=str(err))
    state_dir = events.path
    base = {**pipeline_secrets(ctx), **os.environ}  # the real environment wins
    given = EventContext(
        workspace=ctx.workspace, session_id=ctx.session_id, state_dir=state_dir,
        env=spawn.environment(base, ctx.agent, HOOK_ENV, remove=ctx.secrets),
        # the service already is the agent (or both are root): nothing to drop, and a
        # spawn without a user switch can use vfork (a fork of a big process costs a
        # millisecond)
        account=None if ctx.agent.uid == os.geteuid() else ctx.agent,
        grace=ctx.grace, log=ctx.log, trust=ctx.trust, limits=ctx.limits)
    return Engine(given, dialects.Cache(ctx.workspace, image_dir, ctx.agent.home, ctx.log,
                                        guards), record)
