"""Lifecycle events: one engine for the iteratr, nyzhi, AutoAgent and agent-pipelines hook
systems (and discobot scripts whose type names an event)."""
