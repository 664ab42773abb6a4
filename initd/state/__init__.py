"""The system tier's state: the only way root touches a tree the agent can write
(agentfs/), JSON state files several processes change (statefile), the journal that
makes a request run once (journal/, idempotency), and how times, results and readiness
are written down (clock, jsonview, ready)."""
