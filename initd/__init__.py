"""initd: PID 1 init and supervisor for sandboxed coding-agent containers."""

__version__ = "0.1.0"
