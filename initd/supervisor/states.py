"""The lifecycle of a supervised child, as supervisord names it.

    STOPPED  --start--> STARTING           spawned (exec failures go straight to an exit)
    STARTING --ready--> RUNNING            its readiness check passed (none: at once)
    STARTING/RUNNING --exit--> STOPPING    when the leader left some of its group: that is
                                           stopped off the loop (leftovers.py); then (or at
                                           once, with nothing left):
    STOPPING --done--> BACKOFF             the restart policy wants it back; a delay runs
    STOPPING --done--> EXITED              the policy does not restart it (or exit 0)
    BACKOFF  --due----> STARTING           restarted
    any exit --too many restarts in the window--> FATAL   give up, keep the last code
    STARTING/RUNNING --stop--> STOPPING --gone--> EXITED  shutdown by signal
"""

from __future__ import annotations

from enum import Enum


class State(Enum):
    STOPPED = "stopped"
    STARTING = "starting"
    RUNNING = "running"
    BACKOFF = "backoff"
    STOPPING = "stopping"
    EXITED = "exited"
    FATAL = "fatal"

    @property
    def final(self) -> bool:
        return self in (State.EXITED, State.FATAL)

    @property
    def alive(self) -> bool:
        """A process exists for it (it may not be ready yet)."""
        return self in (State.STARTING, State.RUNNING, State.STOPPING)
