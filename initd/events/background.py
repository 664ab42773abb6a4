"""Running actions: again while they fail (``on_failure: retry``), and fire-and-forget
ones in the background, still owned: at most a limit at once, each waited for (reaped)
by a thread of its own, and all stopped, their process groups too, when the service
stops."""

from __future__ import annotations

import threading
from collections.abc import Callable

from initd.config.log import Logger
from initd.events import actions
from initd.events.actions import ActionResult, Call, Status
from initd.hooks import kinds


def attempts(call: Call) -> ActionResult:
    """The action, and again after ``retry_delay`` while it fails, with on_failure: retry.
    One retry policy: a webhook's ``retries`` are its sends (agent-pipelines: "retry
    attempts for send failures"), made by the webhook itself, so this loop does not go
    around them too (``retries: 2`` once meant 9 requests)."""
    own_retries = call.hook.action == "webhook"
    tries = 1 + (call.hook.retries if call.hook.on_failure == "retry" and not own_retries
                 else 0)
    # Exit 2 is a decision only where the event can be blocked; elsewhere (an iteration's
    # end, a stage's) it is a failure like any other, and retried like one (as
    # agent-pipelines' hook spec says).
    event = kinds.resolve(call.event)
    decided = event is not None and event.blockable
    for attempt in range(tries):
        result = actions.run(call)
        if result.status == Status.OK or (decided and result.exit_code == 2
                                     and call.hook.exit2_blocks) \
                or attempt == tries - 1:
            return result
        if (call.cancel or threading.Event()).wait(call.hook.retry_delay):
            return result
    return result


class Background:
    """Fire-and-forget actions, still owned: at most ``limit`` at once, each in a thread
    that waits for it (reaped), all stopped (their groups) when the service stops."""

    def __init__(self, limit: int, log: Logger) -> None:
        self.limit = limit
        self.log = log
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()

    def start(self, call: Call, done: Callable[[Call, ActionResult], None]) -> bool:
        with self._lock:
            if len(self._threads) >= self.limit or self.stopping.is_set():
                return False
            thread = threading.Thread(target=self._run, args=(call._replace(
                cancel=self.stopping), done), name="event-background", daemon=True)
            self._threads.add(thread)
        thread.start()
        return True

    def _run(self, call: Call, done: Callable[[Call, ActionResult], None]) -> None:
        try:
            result = attempts(call)
            done(call, result)
        except Exception as err:  # a hook never takes the service down
            self.log.error("background hook failed to run", hook=call.hook.where,
                           error=repr(err))
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())

    def stop(self, timeout: float = 15.0) -> None:
        self.stopping.set()
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)
