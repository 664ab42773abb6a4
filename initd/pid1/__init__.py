"""PID 1: the reaper, the signals it takes and passes on, its few lines. Empty: what PID 1
imports is what it needs, never more."""
