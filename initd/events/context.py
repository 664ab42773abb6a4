"""What the event engine needs to run hooks besides the event (events/wiring.py builds it
for a hook context): the hooks' environment without initd's secrets, and the trust
store when enforced; agent-pipelines' secrets file. And one event being fired (Firing):
what each of its hooks is called with."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, NamedTuple

from initd.config.log import Logger
from initd.process.limits import NONE as NO_LIMITS
from initd.process.limits import Limits
from initd.process.users import Account

if TYPE_CHECKING:
    from initd.events.model import EventHook
    from initd.events.wire import Origin
    from initd.hooks.context import HookContext
    from initd.hooks.kinds import Event
    from initd.hooks.trust import Trust
    from initd.state.journal import Entry


class EventContext(NamedTuple):
    """What firing needs besides the event."""

    workspace: str
    session_id: str
    state_dir: str  # ~/.discobot/<session>/events
    env: dict[str, str]  # hooks' base environment: initd's, secrets removed
    account: Account | None
    grace: float
    log: Logger
    trust: Trust | None = None
    limits: Limits = NO_LIMITS  # the image's hook_limits, for every dialect's processes


SECRETS_FILE = (".config", "agent-pipelines", "secrets.env")
SECRETS_LIMIT = 2**16


def pipeline_secrets(ctx: HookContext) -> dict[str, str]:
    """agent-pipelines' ``~/.config/agent-pipelines/secrets.env`` (its hook spec: "Store in
    ~/.config/agent-pipelines/secrets.env or use ${SLACK_WEBHOOK} from environment"): the
    agent user's, read as .env, never over the real environment; a bad one is a line."""
    import io

    from dotenv import dotenv_values

    from initd.state import agentfs

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


class Firing(NamedTuple):
    """One event being fired: what each of its hooks is called with."""

    event: Event
    said: dict[str, Any]  # the payload as a format with stdin only reads it (the Stop loop's)
    own: dict[str, Any]  # the variable table of a format with stdin only (initd's names)
    pipelines: dict[str, dict[str, Any]]
    cancel: threading.Event | None
    journal: Entry | None
    origin: Origin | None

    def views(self, hook: EventHook, payload: dict[str, Any]) -> list[dict[str, Any]]:
        """The event as ``hook`` sees it: ``payload``, and each further view the agent's
        wire made of the same call (``Origin.each``: the other files a Codex patch writes,
        each a Write or Edit of its own) for a hook of another format than the agent's; a
        hook of the agent's own format reads the call once, as the agent sent it."""
        if self.origin is None or hook.dialect == self.origin.agent:
            return [payload]
        return [payload, *self.origin.each]
