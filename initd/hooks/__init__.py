"""Workspace hooks: discovery, front matter, the runner, the status store, session hooks."""
