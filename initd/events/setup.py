"""What the event engine needs to run hooks, and an engine built for a hook context (the
hook service's): the dialects' cache, the session record, the events' state directory,
the hooks' environment without initd's secrets, and the trust store when enforced."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

from initd.log import Logger
from initd.users import Account

if TYPE_CHECKING:
    from initd.events.engine import Engine
    from initd.hooks.context import HookContext
    from initd.hooks.trust import Trust


class Setup(NamedTuple):
    """What firing needs besides the event."""

    workspace: str
    session_id: str
    state_dir: str  # ~/.discobot/<session>/events
    env: dict[str, str]  # hooks' base environment: initd's, secrets removed
    account: Account | None
    grace: float
    log: Logger
    trust: Trust | None = None


def for_context(ctx: HookContext, image_dir: str, command: list[str] | None = None) -> Engine:
    from initd import proc
    from initd.events import dialects, sessions
    from initd.events.engine import Engine

    opened = sessions.Sessions(ctx.state, ctx.session_id, ctx.workspace)
    record: sessions.Sessions | None = opened
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
    setup = Setup(workspace=ctx.workspace, session_id=ctx.session_id, state_dir=state_dir,
                  env=proc.environment(base, ctx.agent, remove=ctx.secrets),
                  # the service already is the agent (or both are root): nothing to drop,
                  # and a spawn without a user switch can use vfork (a fork of a big
                  # process costs a millisecond)
                  account=None if ctx.agent.uid == os.geteuid() else ctx.agent,
                  grace=ctx.grace, log=ctx.log, trust=ctx.trust)
    return Engine(setup, dialects.Cache(ctx.workspace, image_dir, ctx.agent.home), record)


SECRETS_FILE = (".config", "agent-pipelines", "secrets.env")
SECRETS_LIMIT = 2**16


def pipeline_secrets(ctx: HookContext) -> dict[str, str]:
    """agent-pipelines' ``~/.config/agent-pipelines/secrets.env`` (seed 004: "Store in
    ~/.config/agent-pipelines/secrets.env or use ${SLACK_WEBHOOK} from environment"): the
    agent user's, read as .env, never over the real environment; a bad one is a line."""
    import io

    from dotenv import dotenv_values

    from initd import agentfs

    path = os.path.join(ctx.agent.home, *SECRETS_FILE)
    try:
        raw, _ = agentfs.read_regular(path, SECRETS_LIMIT, whole=True)
        values = dotenv_values(stream=io.StringIO(raw.decode("utf-8")))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as err:
        ctx.log.warning("agent-pipelines secrets not read", file=path, error=str(err))
        return {}
    return {k: v for k, v in values.items() if v is not None}
