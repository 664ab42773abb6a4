"""What the event engine needs to run hooks besides the event (events/wiring.py builds it
for a hook context): the hooks' environment without initd's secrets, and the trust
store when enforced; agent-pipelines' secrets file."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

from initd.config.log import Logger
from initd.process.limits import NONE as NO_LIMITS
from initd.process.limits import Limits
from initd.process.users import Account

if TYPE_CHECKING:
    from initd.hooks.context import HookContext
    from initd.hooks.trust import Trust


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
