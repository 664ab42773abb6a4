"""The lifecycle of a supervised child, as supervisord names it. No dependencies.

    STOPPED --start--> RUNNING            spawned (exec failures go straight to EXITED)
    RUNNING --exit---> BACKOFF            the restart policy wants it back; a delay runs
    RUNNING --exit---> EXITED             the policy does not restart it (or exit 0)
    BACKOFF --due----> RUNNING            restarted
    BACKOFF/RUNNING --too many restarts in the window--> FATAL   give up, keep last code
    RUNNING --stop---> STOPPING --gone--> EXITED                 shutdown by signal
"""

from __future__ import annotations

import enum


class State(enum.Enum):
    STOPPED = "stopped"
    RUNNING = "running"
    BACKOFF = "backoff"
    STOPPING = "stopping"
    EXITED = "exited"
    FATAL = "fatal"

    @property
    def final(self) -> bool:
        return self in (State.EXITED, State.FATAL)
