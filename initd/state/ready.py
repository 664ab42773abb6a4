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


DOWN = ("backoff", "fatal", "failed", "blocked", "exited", "stopped")  # a service's states


def services_health(state: dict[str, Any]) -> tuple[str | None, list[str]]:
    """From the supervisor's state: "failed" when a critical service is down, "degraded"
    when another is, else None; and a line for each one down (the same answer in
    /v1/health and /healthz)."""
    worst: str | None = None
    problems = []
    for name, service in sorted((state.get("services") or {}).items()):
        if not isinstance(service, dict) or service.get("state") not in DOWN:
            continue
        critical = service.get("critical") is True
        worst = "failed" if critical or worst == "failed" else "degraded"
        problems.append(f"{'critical ' if critical else ''}service {name} is "
                        f"{service.get('state')} (last exit code {service.get('lastExitCode')})")
    return worst, problems
