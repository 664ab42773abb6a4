"""The root supervisor: boot, the supervised children (the agent API and the hook
service), readiness and the health endpoint. Runs as root (or initd's own user)."""
