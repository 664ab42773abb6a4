"""``/healthz``, ``/readyz`` and ``/metrics`` over HTTP on ``--health-port``, served by
the supervisor from the state it already holds, so a Kubernetes ``httpGet`` probe costs no
Python start (an exec probe, ``initd ready``, starts one every few seconds in every pod)
and never waits on the hook service or the agent's traffic on the control socket.

``/healthz``: 200 while initd supervises (its state in the body). ``/readyz``: 200 once
the agent is ready, 503 with the reason before, while it restarts and once initd stops,
so traffic leaves during the grace period. ``/metrics``: Prometheus' text format
(metrics.py, whose field library is imported at the first scrape: a pod never scraped
never loads it). Standard library only here; the server is the control API's, answering
every request itself, on THREADS threads.

The port listens on every interface, so anyone who reaches the pod may send anything
here, to root (invariant 13): heads are parsed by a total parser (http/wire.py: a 400, never
an exception), and at most MAX_WAITING connections are held while they send their
request: past it, the one sending longest is dropped, so a flood of half-open
connections costs root no more descriptors than that, and a probe (which sends its
request at once) still gets through. The agent is on the pod's network too, and may
connect and close as fast as its processes can: the kernel hands over a connection only
once it has sent something (TCP_DEFER_ACCEPT, for DEFER seconds), each is read when
accepted, so a connection that churns costs a turn of an accept loop, never a poll, and
THREADS threads take them, each weighing as one of the agent's processes."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from initd.errors import InitdError, shown
from initd.http import server
from initd.state.ready import readiness, services_health

if TYPE_CHECKING:
    from initd.state.hookcounts import Counts
    from initd.supervisor.metrics import Metrics

MAX_WAITING = 64  # probes are few (a kubelet's two, a monitor's); past this, half-open
# connections would be holding root's descriptors, and the hook service's restart (a
# socketpair) would find none
BACKLOG = 4096  # connections not yet accepted: the kernel's, not root's descriptors (at
# most net.core.somaxconn). A shorter queue, kept full by clients reconnecting as fast as
# they can, drops a probe's SYN, sent again only a second later (bench/README.md, row 26)
THREADS = 8  # servers on the one listening socket, each in a thread of its own, each
# holding MAX_WAITING // THREADS connections. The scheduler shares the CPU between the
# agent's processes and root's threads alike: fewer threads, even ones that never poll a
# churned connection, do not take connections as fast as a few churning agent processes
# make them (docs/security.md has the figures)
DEFER = 10  # seconds the kernel holds a connection that sends nothing before it hands
# it over all the same (server.READ_TIMEOUT, the time a client has for its request)


Answer = tuple[str, list[tuple[str, str]], bytes]  # status line, headers, body


class Probes:
    def __init__(self, port: int) -> None:
        self.state: dict[str, Any] = {"initd": {"phase": "starting"}, "agent": None}
        self.answers = answers(self.state)
        self.hooks: Counts | None = None  # what the hook service said it counted
        self.metrics: Metrics | None = None  # made at the first scrape
        self._making = threading.Lock()
        try:
            listener = socket.create_server(("", port), backlog=BACKLOG,
                                            family=socket.AF_INET6, dualstack_ipv6=True)
        except OSError:  # no IPv6 here: IPv4 alone
            try:
                listener = socket.create_server(("", port), backlog=BACKLOG)
            except OSError as err:
                raise InitdError(f"cannot serve probes on port {port}: {err.strerror} "
                                 "(--health-port/INITD_HEALTH_PORT)") from None
        listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, DEFER)
        self.port = listener.getsockname()[1]
        self.servers: list[server.UnixWSGIServer] = []
        for n in range(THREADS):
            if not self._serve(listener, copy=n > 0):
                break

    def _serve(self, listener: socket.socket, copy: bool) -> bool:
        """One more server on the listening socket (on a copy of its descriptor but for
        the first) in a thread of its own; False when there is none to be had (EMFILE, a
        pids limit): the ones there are answer. The first one must be."""
        sock = httpd = None
        try:
            sock = listener.dup() if copy else listener
            httpd = server.UnixWSGIServer(sock, self.app, inline=True,
                                          max_waiting=MAX_WAITING // THREADS,
                                          name="initd probes")
            threading.Thread(target=httpd.serve_forever, name="probes", daemon=True).start()
        except (OSError, RuntimeError) as err:
            if httpd is not None:
                httpd.server_close()
            elif sock is not None:
                sock.close()
            if not self.servers:
                raise InitdError(f"cannot serve probes on port {self.port}: {err}") from None
            return False
        self.servers.append(httpd)
        return True

    def update(self, state: dict[str, Any], hooks: Counts | None = None) -> None:
        """What the supervisor now knows, and the two answers made from it once, when it
        changes, never per probe (each replaced whole: a thread reads one or the other,
        never half); /metrics renders it at its next scrape."""
        if state != self.state:
            self.state = state
            self.answers = answers(state)
        self.hooks = hooks
        if self.metrics is not None:  # (else the first scrape takes them, below)
            self.metrics.update(self.state, hooks)

    def app(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        known = self.answers.get(path) if path != "/metrics" else self._metrics()
        status, headers, payload = known if known is not None else answer(404, {
            "error": f"no {shown(path, 60)}: /healthz, /readyz and /metrics are served "
                     "here"})
        start_response(status, headers)  # (never the path whole, above: small)
        return [payload]

    def _metrics(self) -> Answer:
        """/metrics, its library loaded at the first scrape; a failure of ours is a 500
        for that scrape, never the thread's."""
        try:
            metrics = self.metrics
            if metrics is None:
                with self._making:
                    if self.metrics is None:
                        from initd.pid1 import reaped
                        from initd.supervisor.metrics import Metrics

                        self.metrics = Metrics(reaped.shared)
                    metrics = self.metrics
                    metrics.update(self.state, self.hooks)  # (after: an update meanwhile)
            payload = metrics.body()
        except Exception as err:
            return answer(500, {"error": f"metrics: {type(err).__name__}"})
        return ("200 OK", [("Content-Type", metrics.content_type),
                           ("Content-Length", str(len(payload)))], payload)

    def close(self) -> None:
        for httpd in self.servers:
            httpd.shutdown()
        for httpd in self.servers:
            httpd.server_close()


def answers(state: dict[str, Any]) -> dict[str, Answer]:
    """/healthz and /readyz, as ``state`` has them."""
    degraded = (state.get("initd") or {}).get("problems")  # (alive all the same: it passes)
    down, _ = services_health(state)  # (a critical one down stops the container: services.py)
    ready, reason = readiness(state)
    status = down if down == "failed" else "degraded" if degraded or down else "ok"
    return {"/healthz": answer(200, {"status": status, **state}),
            "/readyz": answer(200 if ready else 503, {"ready": ready, "reason": reason,
                                                      "agent": state.get("agent")})}


def answer(code: int, body: dict[str, Any]) -> Answer:
    payload = json.dumps(body).encode()
    return (f"{code} {server.REASONS[code]}", [("Content-Type", "application/json"),
            ("Content-Length", str(len(payload)))], payload)
