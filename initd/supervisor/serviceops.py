"""What root does for each op the hook service may send it (supervisor/requests.py checks
their fields), and how much of it (invariant 16). The service runs as the agent, which
may ptrace it and write to its channel: every op here is one the agent can send root as
often as it likes, so each has a rate and one in flight, and none starts a process as
uid 0.

- The channel itself: root reads at most RATE messages a second from it (BURST at once),
  READ bytes at a time, and once it is at that rate, BATCH at a time: at most RATE /
  BATCH wake-ups a second. Past that, what the service sent waits in the socket, unread,
  until its turn: it is never refused, never answered "busy". So a flood costs root at
  most that much work a second, whatever it asks, and a trust question waits its turn.
- ``trust``: answered in the supervisor's loop, one at a time (a stat of the store and a
  dict look-up). Never "busy": a guard the store approves must never be refused because
  root was busy, and the rate above already bounds what the questions cost. The answer
  is about the hook asked only, and the same words whatever the store holds
  (hooks/trust.py, UNAPPROVED).
- ``precommit``: initd's own ``initd precommit install``, run as the repository's owner,
  one at a time, at most PRECOMMIT_BURST at once and then one every PRECOMMIT_EVERY
  seconds; past that, "busy" or "too many", at once, with no process. For a repository
  root owns (one shared with the agent's group) the rewrite would run as uid 0: it is
  refused with one line, and the chain keeps the hooks it had when initd started.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from initd.config.log import Logger
from initd.process import runner, spawn
from initd.supervisor.pace import Bucket

RATE = 50.0  # messages a second root reads from the service's channel, on average
BURST = 64  # and at once (an event's hooks under --trust: one question each)
BATCH = 16  # at that rate, read this many at a time: a wake-up of the loop costs more
READ = 8192  # bytes read at a time (messages from the service are ~100 bytes)
PRECOMMIT_BURST = 3  # rewrites of the pre-commit chain at once (the service asks at its
PRECOMMIT_EVERY = 10.0  # first turn and when the hooks changed); then one every 10 s
PRECOMMIT_TIMEOUT = 60.0


class Ops:
    def __init__(self, precommit: spawn.Spec | str | None, settings: Mapping[str, str],
                 grace: float, log: Logger) -> None:
        # `initd precommit install …` as the repository's owner; a str: why it is refused
        self.precommit = precommit
        self.settings = settings  # the service's environment, root's making: the store
        self.grace = grace
        self.log = log
        self.channel = Bucket(RATE, BURST)  # what is read from the channel
        self._rewrites = Bucket(1 / PRECOMMIT_EVERY, PRECOMMIT_BURST)
        self._rewriting = threading.Lock()  # one at a time (released by its worker)
        self._unread: str | None = None  # why the store could not be read, last said

    def trust(self, key: str, digest: str) -> dict[str, Any]:
        """Is ``digest`` approved for ``key``? From the store named in the service's own
        settings; why it could not be read goes to root's log, never to the agent."""
        from initd.hooks import trust  # (only a --trust container asks)

        try:
            reply, problem = trust.answer(self.settings, key, digest)
        except Exception as err:  # a bug of ours: a refusal, never the supervisor's end
            reply, problem = {"trusted": False, "why": trust.UNAPPROVED}, repr(err)
        if problem is not None and problem != self._unread:
            self.log.error("the trust store cannot be read: every workspace hook is "
                           "refused", problem=problem)
        self._unread = problem
        return reply

    def precommit_refusal(self) -> dict[str, Any] | None:
        """The answer to a ``precommit`` request that is not to run (at once, no process),
        or None: it runs (call ``rewrite`` in a worker, which ends the one in flight)."""
        if self.precommit is None:
            return {"result": "no managed pre-commit chain in this workspace"}
        if isinstance(self.precommit, str):
            return {"refused": self.precommit}
        if not self._rewriting.acquire(blocking=False):
            return {"error": "busy: a rewrite of the pre-commit chain is running; ask "
                             "again once it is done"}
        if not self._rewrites.take():
            self._rewriting.release()
            return {"error": f"too many: the pre-commit chain is rewritten at most "
                             f"{PRECOMMIT_BURST} times at once, then once every "
                             f"{PRECOMMIT_EVERY:g} s; ask again later"}
        return None

    def rewrite(self, cancel: threading.Event) -> dict[str, Any]:
        """``initd precommit install`` as the repository's owner (for a repository of the
        agent's, as the agent), isolated, bounded: root parses nothing of the workspace's
        here, and writes nothing there with its own credentials. Ends the one in flight
        that ``precommit_refusal`` let start."""
        try:
            spec = self.precommit
            assert isinstance(spec, spawn.Spec)
            got = runner.capture(spec.argv, env=spec.env, cwd=spec.cwd, account=spec.account,
                                 timeout=PRECOMMIT_TIMEOUT, grace=self.grace, cancel=cancel)
        finally:
            self._rewriting.release()
        if got.exec_error is not None or got.timed_out or got.exit_code != 0:
            why = got.exec_error or ("timed out" if got.timed_out else
                                     got.stderr.text().strip() or f"exit code {got.exit_code}")
            return {"error": why.splitlines()[-1].removeprefix("initd: ")[:2000]}
        done = got.stdout.text().strip()
        self.log.info("pre-commit chain refreshed", result=done)
        return {"result": done}
