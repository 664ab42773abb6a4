"""Ready or not, from the state root's supervisor publishes: the same answer in root's
health endpoint (supervisor/health.py) and in the hook service's /v1/ready, which gets
the state over its link."""

from __future__ import annotations

from typing import Any


def readiness(state: dict[str, Any]) -> tuple[bool, str]:
    """From the supervisor's state: ready once the agent is, not while initd stops (the
    same answer here and in the hook service's /v1/ready)."""
    phase = (state.get("initd") or {}).get("phase")
    agent = state.get("agent")
    if phase == "stopping":
        return False, "initd is stopping"
    if not agent:
        return False, "the agent has not been started yet"
    if not agent.get("ready"):
        how = f" (ready once {agent['readyBy']} answers)" if agent.get("readyBy") else ""
        return False, f"the agent is {agent.get('state')}{how}"
    return True, "the agent is ready"
