"""Connections to a TCP port as fast as one process can make them: the agent's attack on
the probe port (tests/security/test_probe_churn.py, bench/probeport.py), run inside a
network namespace of its own (tests/support/netns.py): ``churn.py HOST PORT KIND N``.

Each of the N connections, by KIND:

- ``churn``: closed the moment it is up, and another made in its place: connect, close,
  as fast as they go. One not up within GIVE_UP is given up for a new one: its SYN was
  dropped (the server's backlog was full), and the kernel would send it again only a
  second later; an attacker wants the next one in, not to wait.
- ``hold``: held without a byte; made again once the server drops it.
- ``slowloris``: sends the start of a head, then nothing; made again once dropped.

Prints ``churning`` once N connections have been up (the pressure is on), and what it did
(``connected=... given_up=... dropped=...``) when its stdin closes or SIGTERM comes.
"""

from __future__ import annotations

import os
import resource
import select
import signal
import socket
import sys
import time
from collections import Counter

GIVE_UP = 0.02  # seconds a connect may take before another is made in its place
PARTIAL = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "


class Churn:
    def __init__(self, address: tuple[str, int], kind: str, n: int) -> None:
        self.address, self.kind, self.n = address, kind, n
        self.poller = select.poll()
        self.socks: dict[int, tuple[socket.socket, float | None]] = {}  # fd: (s, since)
        self.counts: Counter[str] = Counter()
        self.stop = False

    def connect(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.connect_ex(self.address)
        self.socks[sock.fileno()] = (sock, time.monotonic())  # since: still connecting
        self.poller.register(sock, select.POLLOUT | select.POLLIN)

    def again(self, fd: int, what: str) -> None:
        sock, _ = self.socks.pop(fd)
        self.poller.unregister(fd)
        sock.close()
        self.counts[what] += 1
        self.connect()

    def up(self, fd: int) -> None:
        self.counts["connected"] += 1
        if self.kind == "churn":
            self.again(fd, "closed")
            return
        sock, _ = self.socks[fd]
        self.socks[fd] = (sock, None)
        self.poller.modify(fd, select.POLLIN)
        if self.kind == "slowloris":
            try:
                sock.send(PARTIAL)
            except OSError:
                self.again(fd, "dropped")

    def event(self, fd: int, mask: int) -> None:
        sock, since = self.socks[fd]
        if since is not None:  # connecting
            if mask & (select.POLLERR | select.POLLHUP):
                self.again(fd, "refused")
            elif mask & select.POLLOUT:
                self.up(fd)
            return
        try:
            if sock.recv(4096):
                return  # (an answer: the server closes next)
        except BlockingIOError:
            return
        except OSError:
            pass
        self.again(fd, "dropped")

    def give_up(self) -> None:
        now = time.monotonic()
        late = [fd for fd, (_, since) in self.socks.items()
                if since is not None and now - since > GIVE_UP]
        for fd in late:
            self.again(fd, "given_up")

    def run(self) -> None:
        for _ in range(self.n):
            self.connect()
        self.poller.register(sys.stdin.fileno(), select.POLLIN)
        said = False
        while not self.stop:
            if not said and self.counts["connected"] >= self.n:
                print("churning", flush=True)
                said = True
            for fd, mask in self.poller.poll(GIVE_UP * 1000 / 2):
                if fd == sys.stdin.fileno():
                    self.stop = self.stop or not os.read(fd, 1024)
                elif fd in self.socks:
                    self.event(fd, mask)
            self.give_up()


def main() -> None:
    host, port, kind, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 256), hard))
    churn = Churn((host, port), kind, n)
    signal.signal(signal.SIGTERM, lambda *_: setattr(churn, "stop", True))
    churn.run()
    print(" ".join(f"{k}={v}" for k, v in sorted(churn.counts.items())), flush=True)


if __name__ == "__main__":
    main()
