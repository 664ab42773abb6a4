"""The test run's own agent user: a name no other run on this host uses, so two suites at
once never delete each other's user (a fixed name once did: "unknown user")."""

from __future__ import annotations

import secrets

_RUN = secrets.token_hex(3)
AGENT = f"initd-test-{_RUN}"
AGENT_GROUP = f"initd-tx-{_RUN}"
