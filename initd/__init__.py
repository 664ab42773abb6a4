"""initd: PID 1 init and supervisor for sandboxed coding-agent containers."""

__version__ = "0.1.0"

# initd's verbs: the first argument, before any option (a program called "hooks" is run
# with -- before it, or by its path).
VERBS = ("hooks", "precommit", "service", "status", "health", "ready", "turn", "emit",
         "sessions", "config", "shim")
