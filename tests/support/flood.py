"""Hostile clients of a TCP port, as a process of their own (it raises its own descriptor
limit, not the test's): ``flood.py HOST PORT N [GARBAGE [RATE]]``.

N connections that never finish a request: half send the start of a head and then
nothing (still sending), half send nothing at all (half-open). Each is opened again once
the server drops it (at most RATE a second, 1,000 unless told), so the pressure lasts as
long as the flood does, whatever the server's timeouts. GARBAGE more connections send
malformed heads (the Content-Length attacks among them), read the answer to its end, and
start again.

Prints ``flooding`` once every one of them has been in and the server has dropped as many
connections as there are: it is at its cap, and the pressure is whole. Ends, and prints
what it did, when its stdin closes.
"""

from __future__ import annotations

import errno
import os
import random
import resource
import select
import socket
import sys
import time
from collections import Counter, deque

PARTIAL = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "
GARBAGE = [
    b"GET /healthz HTTP/1.1\r\nContent-Length: \xb2\r\n\r\n",  # "²".isdigit() is True
    b"GET /healthz HTTP/1.1\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
    b"G\xc9T /healthz HTTP/1.1\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nX\x00: y\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nX: a\rb\r\n\r\n",
    b"GET /%00 HTTP/1.1\r\n\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",  # a TLS hello, say
]
WATCH = select.POLLIN | select.POLLOUT
CONNECTING = 32  # connects under way at once
RATE = 1000  # connections opened again a second, at most: each one leaves an entry in
# the host's conntrack table for two minutes, and an unbounded churn (20,000 a second)
# filled this host's (262,144), which then dropped every connection's packets


class Flood:
    def __init__(self, host: str, port: int, held: int, garbage: int,
                 rate: int = RATE) -> None:
        self.address = (host, port)
        self.poller = select.poll()
        self.socks: dict[int, tuple[socket.socket, str, bool]] = {}  # fd: (s, kind, up)
        self.counts: Counter[str] = Counter()
        self.rng = random.Random(0)
        self.todo: deque[str] = deque()  # kinds waiting for their turn to connect
        self.connecting = 0
        self.dropped = 0
        self.tokens = float(held + garbage)  # the first ones go at once, then rate a second
        self.rate = rate
        self.refilled = time.monotonic()
        self.total = held + garbage
        self.todo.extend(("partial" if k % 2 else "idle") for k in range(held))
        self.todo.extend(["garbage"] * garbage)
        self.pump()

    def pump(self) -> None:
        """Connect as many as are waiting, keeping at most CONNECTING under way: more
        would overflow the server's backlog, and a dropped SYN waits a second to be sent
        again (an attacker wants its connections in, not in the kernel's retries)."""
        now = time.monotonic()
        self.tokens = min(self.tokens + (now - self.refilled) * self.rate,
                          max(self.tokens, self.rate))
        self.refilled = now
        while self.todo and self.connecting < CONNECTING and self.tokens >= 1:
            self.tokens -= 1
            kind = self.todo.popleft()
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setblocking(False)
            err = sock.connect_ex(self.address)
            if err not in (0, errno.EINPROGRESS):
                self.counts[f"connect {errno.errorcode.get(err, err)}"] += 1
            self.socks[sock.fileno()] = (sock, kind, False)
            self.poller.register(sock, WATCH)
            self.connecting += 1

    def again(self, fd: int) -> None:
        """Closed (by the server, most often): this kind connects again."""
        sock, kind, up = self.socks.pop(fd)
        self.poller.unregister(fd)
        sock.close()
        if not up:
            self.connecting -= 1
        self.counts[f"{kind} dropped"] += 1
        self.dropped += 1
        self.todo.append(kind)
        self.pump()

    def event(self, fd: int, mask: int) -> None:
        sock, kind, up = self.socks[fd]
        if not up and mask & select.POLLOUT and not mask & (select.POLLERR | select.POLLHUP):
            self.socks[fd] = (sock, kind, True)  # connected: says what its kind says, once
            self.connecting -= 1
            self.counts["connections"] += 1
            self.poller.modify(fd, select.POLLIN)
            try:
                if kind == "partial":
                    sock.send(PARTIAL)
                elif kind == "garbage":
                    sock.sendall(self.rng.choice(GARBAGE))
                    self.counts["garbage heads"] += 1
            except OSError:
                self.again(fd)
                return
            self.pump()
            return
        try:
            chunk = sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk.startswith(b"HTTP/1.0 "):
            self.counts[f"answered {chunk[9:12].decode(errors='replace')}"] += 1
        if not chunk:
            self.again(fd)

    def run(self) -> None:
        self.poller.register(sys.stdin.fileno(), select.POLLIN)
        said = False
        while True:
            if not said and self.counts["connections"] >= self.total and \
                    self.dropped >= self.total:
                print("flooding", flush=True)
                said = True
            for fd, mask in self.poller.poll(10 if self.todo else 1000):
                if fd == sys.stdin.fileno():
                    if not os.read(fd, 1024):
                        return
                elif fd in self.socks:
                    self.event(fd, mask)
            self.pump()


def main() -> None:
    host, port, held = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    garbage = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    rate = int(sys.argv[5]) if len(sys.argv) > 5 else RATE
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, held + garbage + 256), hard))
    flood = Flood(host, port, held, garbage, rate)
    flood.run()
    print(" ".join(f"{k.replace(' ', '_')}={v}" for k, v in sorted(flood.counts.items())),
          flush=True)


if __name__ == "__main__":
    main()
