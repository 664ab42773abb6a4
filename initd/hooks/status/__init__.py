"""``~/.discobot/{sessionId}/hooks/``: status.json's schema (schema), the store several
processes share (store: a StateFile, through agentfs), and the store kept in memory when
the state directory cannot be written (memory)."""
