"""initd: PID 1 init and supervisor for sandboxed coding-agent containers."""

__version__ = "0.1.0"

# initd's verbs: the first argument, before any option (a program called "hooks" is run
# with -- before it, or by its path), each -> (its module in initd.commands, its function):
# a verb imports its own module alone (an exec probe runs every few seconds in every pod)
VERBS = {"hooks": ("hooks", "main"), "precommit": ("precommit", "main"),
         "service": ("service", "main"), "status": ("status", "status"),
         "health": ("health", "health"), "ready": ("health", "ready"),
         "turn": ("turn", "turn"), "emit": ("emit", "emit"),
         "sessions": ("sessions", "sessions"), "config": ("config", "config"),
         "shim": ("shim", "shim"), "services": ("services", "main"),
         # hidden: a service's logger, started by the supervisor (supervisor/servicelog.py)
         "svlog": ("svlog", "main")}
