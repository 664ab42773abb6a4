"""The hook service as the supervisor's child: its inherited socket, its private channel,
and what it may ask of root.

Each start gets a new socketpair (channel.py), and the same sealed guard snapshot
(supervisor/guards.py): a service the agent kills comes back with the session's guards.
The service says ``ready`` on the channel once it serves; the supervisor pushes the
agent's state there whenever it changes. Two requests (serviceops.py says what each
does, and how often): ``precommit`` rewrites the managed chain, in a short-lived ``initd
precommit install`` run as the repository's owner (never as uid 0), in a worker thread so
the supervisor's loop keeps forwarding signals meanwhile; ``trust`` only asks whether a
hook's hash is approved (the store is root's alone, 0600), answered in the loop. Root runs
no hook for the service: every hook runs as the agent once the agent runs (invariant 11).
The service also says what it counted (``metrics``, about once a second), which root
keeps for /metrics as data (state/hookcounts.py: checked, bounded, never an error); while
a summary sent sooner than its pace waits to be taken, root reads no more of the channel,
so a flood of them costs root what its pace allows (bench/metrics.py, 34b).

The service runs as the agent, which may ptrace it: its end of the channel is the
agent's (invariant 8). So every message is checked (its op, its fields and their types,
that is all), the channel is read at a bounded rate (what is past it waits, unread),
each op has its own bound, and the supervisor never blocks on the service: whatever is
not a message of ours, or a service that stops reading, costs one log line, that
channel, and a restart of the service.

The service runs in a session of its own. When it dies, or is stopped, what it left (its
hooks, each in a group of its own) is stopped by that session, whose id root knows
because it started the service (never from a process group a file names), beside its
group and by the same deadline: one grace for both, off the loop. The next service
records those hooks as interrupted.
"""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from initd.config.log import Logger
from initd.config.values import Restart
from initd.errors import InitdError
from initd.process import spawn
from initd.process.channel import Channel, Message, ProtocolError, close_fd
from initd.state import hookcounts
from initd.supervisor import requests
from initd.supervisor.backoff import Backoff
from initd.supervisor.deferred import close_listener
from initd.supervisor.serviceops import BATCH, READ, Ops
from initd.supervisor.sigchan import SignalChannel
from initd.supervisor.supervised import Supervised

REPLY_WAIT = 10.0  # seconds a worker's reply may wait for the service to read


class ServiceChild(Supervised):
    announces_ready = True

    def __init__(self, spec: spawn.Spec, *, listener: socket.socket, guards: int | None,
                 precommit: spawn.Spec | str | None, window: float, grace: float,
                 log: Logger) -> None:
        # Restarted always, with the capped backoff and no crash-loop limit: the agent
        # may live without hooks for a while, never because of them.
        super().__init__("hook-service", spec._replace(new_session=True), restart=Restart.ALWAYS,
                         backoff=Backoff(max_restarts=2**31, window=window), grace=grace,
                         log=log, ready_by="its control API")
        self.listener = listener
        self.guards = guards  # the guard snapshot's sealed memory file (boot closes it)
        # what each op does, and its bounds (`precommit`: as the repository's owner)
        self.ops = Ops(precommit, spec.env, grace, self.log)
        self.channel: Channel | None = None
        self._child_end = -1
        self._inbox: deque[Message] = deque()  # read from the channel, not yet served
        self._runs: dict[int, threading.Event] = {}  # requests running, by id
        self._workers: list[threading.Thread] = []
        self._pushed: Message | None = None
        # the image's services (services.py: ServiceSet.control, who asks bound): None,
        # none in this container
        self.control: Callable[[str, str], dict[str, Any]] | None = None
        self.counts = hookcounts.Tally()  # what it said it counted, for /metrics

    # --- Supervised's extension points

    def make_spec(self) -> spawn.Spec:
        """A new channel for each start; the listening socket is the same for all."""
        self._close_channel()
        close_fd(self._child_end)  # left over if the last exec failed
        self._child_end = -1  # (a pair that fails below must not leave a number to close)
        try:
            self.channel, self._child_end = Channel.pair()
        except OSError as err:  # EMFILE, ENFILE: a failed start, retried with the backoff
            raise InitdError(f"cannot make the hook service's channel: {err.strerror} "
                             "(a descriptor limit reached?)") from None
        fds = (self.listener.fileno(), self._child_end)
        guards = () if self.guards is None else ("--guards-fd", str(self.guards))
        return self.spec._replace(
            argv=(*self.spec.argv, "--listen-fd", str(fds[0]), "--channel-fd", str(fds[1]),
                  *guards), pass_fds=(*fds, *([] if self.guards is None else [self.guards])))

    def spawned(self, child: spawn.Child) -> None:
        close_fd(self._child_end)  # the child's now: its exit must give us EOF
        self._child_end = -1
        self._pushed = None  # the new service knows nothing yet
        self.counts.restarted(time.monotonic())  # (its counts start again: root's go on)

    def ended(self, child: spawn.Child, deadline: float) -> None:
        """Its exit (or its stop) ends its channel and its requests; what is in its
        session is stopped beside its group, by the same deadline, off the loop."""
        self._close_channel()
        for cancel in list(self._runs.values()):
            cancel.set()
        uid = self.spec.account.uid if self.spec.account is not None else None
        outlived = child.popen.returncode is not None  # (at a stop: it counts itself)

        def stop_process_session() -> None:
            stopped = spawn.stop_process_session(child.pid, uid,
                                                 max(0.0, deadline - time.monotonic()))
            if stopped and outlived:
                self.log.warning("the hook service's hooks outlived it: stopped",
                                 processes=stopped)

        self._spawn_worker("leftovers", stop_process_session)  # (may take the grace: off the loop)

    def waitables(self) -> list[Any]:
        """The channel only while root would read it now: nothing read is left to serve,
        no summary of what it counted waits to be taken, and its rate allows a batch more
        (else what the service sent waits, unread)."""
        channel = self.channel
        read = channel is not None and not channel.closed and self._readable()
        return [*super().waitables(), *([channel] if read else [])]

    def _readable(self) -> bool:
        return not self._inbox and self.counts.due(0) is None \
            and self.ops.channel.ready(BATCH)

    def timeout(self) -> float | None:
        """Also: when the channel's rate allows the next batch, if one waits (or may), and
        when what it counted is to be taken."""
        mine = None
        if self.channel is not None and (self._inbox or not self.ops.channel.ready(BATCH)):
            mine = self.ops.channel.wait(BATCH)
        waits = [t for t in (mine, super().timeout(), self.counts.due(time.monotonic()))
                 if t is not None]  # (and when a summary kept is to be taken)
        return min(waits) if waits else None

    def tick(self) -> None:
        self._serve_channel()
        self.counts.take(time.monotonic())
        super().tick()

    def stop(self, sig: int, signals: SignalChannel | None = None,
             grace: float | None = None, beside: Any = None) -> int:
        # one deadline: its group (super), its session and its requests (ended)
        deadline = time.monotonic() + (self.grace if grace is None else grace) + 1 \
            + spawn.KILL_SETTLE
        code = super().stop(sig, signals, grace, beside)
        for worker in self._workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        return code

    # --- the channel

    def push(self, state: Message) -> None:
        """Tell the service the supervisor's view (only when it changed); never wait."""
        channel = self.channel
        if channel is None or state == self._pushed:
            return
        if channel.send({"op": "state", **state}, wait=0):
            self._pushed = state
        elif channel.closed:
            self._violated("it does not read its channel")

    def _serve_channel(self) -> None:
        channel = self.channel
        if channel is None:
            return
        if channel.closed:  # a worker's reply found the service not reading
            self._violated("it does not read its channel")
            return
        if not self._inbox:
            if not self._readable() or not spawn.wait_fds([channel], 0):
                return
            try:
                messages = channel.receive(READ)
            except ProtocolError as err:
                self._violated(str(err))
                return
            if messages is None:
                self._close_channel()  # the service is going; its exit comes by its pidfd
                return
            self._inbox.extend(messages)
        while self._inbox and self.ops.channel.take():  # the rest: at the rate's pace
            message = self._inbox.popleft()
            problem = requests.problem(message, self._runs)
            if problem is not None:
                self._violated(problem)
                return
            self._serve(channel, message)

    def _serve(self, channel: Channel, message: Message) -> None:
        op = message["op"]
        if op == "ready":
            self.mark_ready()
        elif op == "metrics":  # data, never an error: what is not ours is left out
            self.counts.said(message.get("counts"), time.monotonic())
        elif op == "cancel":
            run = self._runs.get(message["id"])
            if run is not None:
                run.set()
        elif op == "control":  # answered here: it never waits (unit.py)
            channel.send({"op": "reply", "id": message["id"],
                          **self._control(message["service"], message["verb"])}, wait=0)
        elif op == "trust":  # answered here, never "busy" (serviceops.py)
            channel.send({"op": "reply", "id": message["id"],
                          **self.ops.trust(message["key"], message["digest"])}, wait=0)
        elif (refusal := self.ops.precommit_refusal()) is not None:
            channel.send({"op": "reply", "id": message["id"], **refusal}, wait=0)
        else:
            self._request(channel, message)

    def _control(self, name: str, verb: str) -> dict[str, Any]:
        if self.control is None:
            return {"status": 404, "error": "no services in this container"}
        try:
            return self.control(name, verb)
        except Exception as err:  # a bug of ours: an answer, never the supervisor's end
            self.log.error("control of a service failed", service=name, error=repr(err))
            return {"status": 500, "error": f"{type(err).__name__}: {err}"}

    def _violated(self, problem: str) -> None:
        """Not ours: one line, the channel closed, the service killed (and so restarted,
        with the backoff, by tick)."""
        self.log.error("the hook service broke the channel protocol: restarting it",
                       problem=problem)
        self._close_channel()
        if self.child is not None:
            self.child.signal_group(signal.SIGKILL)

    def _request(self, channel: Channel, request: Message) -> None:
        cancel = self._runs[request["id"]] = threading.Event()

        def work() -> None:
            try:
                reply = self.ops.rewrite(cancel)  # (the one op that runs in a worker)
            except Exception as err:  # never the supervisor's end: an answer that says so
                self.log.error("request from the hook service failed", op=request["op"],
                               error=repr(err))
                reply = {"error": f"{request['op']} failed: {type(err).__name__}: {err}"}
            finally:
                self._runs.pop(request["id"], None)
            channel.send({"op": "reply", "id": request["id"], **reply}, wait=REPLY_WAIT)

        self._spawn_worker(str(request["op"]), work)

    def _spawn_worker(self, name: str, target: Any) -> None:
        """``target`` off the supervisor's loop; when no thread can be made (a pids limit
        reached: threads count), right here instead (bounded: each of these is), never
        the supervisor's death."""
        self._workers = [w for w in self._workers if w.is_alive()]
        worker = threading.Thread(target=target, name=f"service-{name}", daemon=True)
        try:
            worker.start()
        except RuntimeError as err:  # "can't start new thread"
            self.log.error("no thread for the hook service's work: doing it in line",
                           work=name, error=str(err))
            target()
            return
        self._workers.append(worker)

    def _close_channel(self) -> None:
        self._inbox.clear()
        if self.channel is not None:
            self.channel.close()
            self.channel = None

    def close(self) -> None:
        """At the very end: the socket goes (the agent's clients see it gone)."""
        close_listener(self.listener)
