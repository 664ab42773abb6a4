"""The hook service as the supervisor's child: its inherited socket, its private channel,
and what it may ask of root.

Each start gets a new socketpair (channel.py). The service says ``ready`` on it once it
serves; the supervisor pushes the agent's state there whenever it changes. Requests run
in worker threads, so the supervisor's loop keeps forwarding signals meanwhile:
``root-hook`` runs root's boot-time copy of a ``run_as: root`` hook (hooks/roothooks.py),
``precommit`` rewrites the managed chain from the hooks as they are now. When the
service dies, root's runs for it are cancelled, and the hooks it ran itself are recorded
as interrupted and their process groups stopped: no hook outlives its runner.
"""

from __future__ import annotations

import os
import select
import socket
import threading
from typing import Any

from initd import proc
from initd.backoff import Backoff
from initd.hooks import discovery, precommit, runner
from initd.hooks.roothooks import RootHooks
from initd.hooks.session import HookContext, recover_interrupted
from initd.log import Logger
from initd.service.channel import Channel, Message, close_fd
from initd.settings import Restart
from initd.supervised import Supervised


class ServiceChild(Supervised):
    announces_ready = True

    def __init__(self, spec: proc.Spec, *, listener: socket.socket, ctx: HookContext,
                 roots: RootHooks | None, repo: precommit.Repo | None, image_dir: str,
                 window: float, grace: float, log: Logger) -> None:
        # Restarted always, with the capped backoff and no crash-loop limit: the agent
        # may live without hooks for a while, never because of them.
        super().__init__("hook-service", spec, restart=Restart.ALWAYS,
                         backoff=Backoff(max_restarts=2**31, window=window), grace=grace,
                         log=log, ready_by="its control API")
        self.listener = listener
        self.ctx = ctx
        self.roots = roots
        self.repo = repo
        self.image_dir = image_dir
        self.channel: Channel | None = None
        self._child_end = -1
        self._runs: dict[int, threading.Event] = {}  # root's runs, by request id
        self._workers: list[threading.Thread] = []
        self._pushed: Message | None = None

    # --- Supervised's extension points

    def make_spec(self) -> proc.Spec:
        """A new channel for each start; the listening socket is the same for all."""
        self._close_channel()
        close_fd(self._child_end)  # left over if the last exec failed
        self.channel, self._child_end = Channel.pair()
        fds = (self.listener.fileno(), self._child_end)
        return self.spec._replace(
            argv=(*self.spec.argv, "--listen-fd", str(fds[0]), "--channel-fd", str(fds[1])),
            pass_fds=fds)

    def spawned(self, child: proc.Child) -> None:
        close_fd(self._child_end)  # the child's now: its exit must give us EOF
        self._child_end = -1
        self._pushed = None  # the new service knows nothing yet

    def gone(self, child: proc.Child) -> None:
        self._close_channel()
        for cancel in list(self._runs.values()):
            cancel.set()
        # Off the loop: stopping a leftover group may take the grace period.
        self._spawn_worker("recover", lambda: recover_interrupted(
            self.ctx, lambda pid: pid == child.pid))

    def waitables(self) -> list[Any]:
        open_channel = [self.channel] if self.channel is not None else []
        return [*super().waitables(), *open_channel]

    def tick(self) -> None:
        self._serve_channel()
        super().tick()

    def stop(self, sig: int) -> int:
        code = super().stop(sig)
        for worker in self._workers:  # root's runs, cancelled by gone(), stop their groups
            worker.join(self.grace + proc.KILL_SETTLE + 1)
        return code

    # --- the channel

    def push(self, state: Message) -> None:
        """Tell the service the supervisor's view (only when it changed)."""
        if self.channel is not None and state != self._pushed and self.channel.send(
                {"op": "state", **state}):
            self._pushed = state

    def _serve_channel(self) -> None:
        channel = self.channel
        if channel is None or not select.select([channel], [], [], 0)[0]:
            return
        messages = channel.receive()
        if messages is None:
            self._close_channel()  # the service is going; its exit comes by its pidfd
            return
        for message in messages:
            op, request_id = message.get("op"), message.get("id")
            if op == "ready":
                self.mark_ready()
            elif op == "cancel" and request_id in self._runs:
                self._runs[request_id].set()
            elif op in ("root-hook", "precommit") and isinstance(request_id, int):
                self._request(channel, message)
            else:
                self.log.warning("the hook service sent an unknown request", op=op)

    def _request(self, channel: Channel, request: Message) -> None:
        cancel = self._runs[request["id"]] = threading.Event()

        def work() -> None:
            try:
                reply = self._answer(request, cancel)
            except Exception as err:  # never the supervisor's end: an answer that says so
                self.log.error("request from the hook service failed", op=request["op"],
                               error=repr(err))
                reply = {"error": f"{request['op']} failed: {type(err).__name__}: {err}"}
            finally:
                self._runs.pop(request["id"], None)
            channel.send({"op": "reply", "id": request["id"], **reply})

        self._spawn_worker(str(request["op"]), work)

    def _answer(self, request: Message, cancel: threading.Event) -> dict[str, Any]:
        if request["op"] == "root-hook":
            hook_id = str(request.get("hook"))
            result = self.roots.run(hook_id, self.ctx, cancel) if self.roots else None
            if result is None:
                return {"error": f"no run_as: root hook {hook_id!r} was there when initd "
                                 "started, so root will not run it"}
            return {"result": runner.to_wire(result)}
        if self.repo is None:
            return {"result": "no managed pre-commit chain in this workspace"}
        hooks = discovery.for_workspace(self.ctx.workspace, self.image_dir).hooks
        done = precommit.install(self.repo, hooks, session_id=self.ctx.session_id)
        self.log.info("pre-commit chain refreshed", result=done)
        return {"result": done}

    def _spawn_worker(self, name: str, target: Any) -> None:
        self._workers = [w for w in self._workers if w.is_alive()]
        worker = threading.Thread(target=target, name=f"service-{name}", daemon=True)
        worker.start()
        self._workers.append(worker)

    def _close_channel(self) -> None:
        if self.channel is not None:
            self.channel.close()
            self.channel = None

    def close(self) -> None:
        """At the very end: the socket goes (the agent's clients see it gone), the copies."""
        path = self.listener.getsockname()
        self.listener.close()
        try:
            os.unlink(path)
        except OSError:
            pass
        if self.roots is not None:
            self.roots.close()
