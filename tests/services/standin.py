"""A stand-in service, run by initd as the services of the image's config (issue 39): it
says what happened to it as lines appended to one events file that every service and the
agent share (one os.write of O_APPEND each, so the file's order is the order of events),
and does what its flags say: wait for a gate file, say it is ready the way its service's
``ready:`` expects, exit, ignore TERM, leave an orphan behind.

    standin.py BOX NAME [--gate FILE] [--ready KIND[:ARG]] [--exit CODE] [--ignore-term]
                        [--linger] [--orphan] [--flood BYTES]

Lines: ``NAME start PID``, ``NAME ready``, ``NAME stopping SIGNAME``, ``NAME stopped``,
``NAME exit CODE``, ``NAME orphan PID``. Its latest pid is BOX/NAME.pid too, its
$NOTIFY_SOCKET (or "-") BOX/NAME.notify. Standard library only: it runs as any user,
with ``python -I``, from a file every user can read.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
import time

LINE = b"x" * 1023 + b"\n"  # what --flood writes: 1 KiB lines


def say(box: str, text: str) -> None:
    fd = os.open(os.path.join(box, "events"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(fd, (text + "\n").encode())
    finally:
        os.close(fd)


def put(path: str, text: str) -> None:
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def wait_file(path: str) -> None:
    while not os.path.exists(path):
        time.sleep(0.02)


def notify(path: str, message: bytes) -> None:
    """sd_notify's protocol: one datagram to $NOTIFY_SOCKET ("@": an abstract name)."""
    address = "\0" + path[1:] if path.startswith("@") else path
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.sendto(message, address)


HTTP_READY = threading.Event()


def serve(port: int, http: bool) -> None:
    """Listen on loopback, in a thread; with ``http``, a GET is answered 503 until
    HTTP_READY is set, 200 from then on."""
    server = socket.create_server(("127.0.0.1", port))

    def answer() -> None:
        while True:
            conn, _ = server.accept()
            if http:
                conn.recv(65536)
                status = b"200 OK" if HTTP_READY.is_set() else b"503 Not Yet"
                conn.sendall(b"HTTP/1.0 " + status + b"\r\nContent-Length: 0\r\n\r\n")
            conn.close()
    threading.Thread(target=answer, daemon=True).start()


def almost_ready(how: str) -> None:
    """Before the gate: what is not yet readiness, by each protocol's letter. An s6
    notification without its newline; an sd_notify datagram without READY=1 (its unknown
    or other assignments say nothing of it); a port that answers HTTP 503."""
    kind, _, arg = how.partition(":")
    if kind == "fd":
        os.write(int(arg), b"up")
    elif kind == "notify":
        notify(os.environ["NOTIFY_SOCKET"], b"STATUS=warming up")
    elif kind == "http":
        serve(int(arg), http=True)


def get_ready(box: str, name: str, how: str) -> None:
    """Said first, done next: a dependent's start line can only follow it."""
    say(box, f"{name} ready")
    kind, _, arg = how.partition(":")
    if kind == "fd":  # s6: the line's end, then the descriptor closed
        os.write(int(arg), b"\n")
        os.close(int(arg))
    elif kind == "notify":
        notify(os.environ["NOTIFY_SOCKET"], b"READY=1")
    elif kind == "port":
        serve(int(arg), http=False)
    elif kind == "http":
        HTTP_READY.set()
    elif kind == "file":  # what an exec probe tests for
        put(arg, "up\n")


def orphan(box: str, name: str) -> None:
    """A double fork: the grandchild outlives its parent (reparented to the subreaper), in
    the service's process group."""
    if os.fork() == 0:
        if os.fork() == 0:
            say(box, f"{name} orphan {os.getpid()}")
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            while True:
                time.sleep(1)
        os._exit(0)
    os.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    for flag in ("box", "name"):
        parser.add_argument(flag)
    parser.add_argument("--gate")
    parser.add_argument("--ready")
    parser.add_argument("--exit", type=int)
    parser.add_argument("--flood", type=int)
    for flag in ("--ignore-term", "--linger", "--orphan"):
        parser.add_argument(flag, action="store_true")
    opts = parser.parse_args()
    box, name = opts.box, opts.name
    stopping = {signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGHUP}

    def stop(signum: int, frame: object) -> None:
        say(box, f"{name} stopping {signal.Signals(signum).name}")
        if opts.ignore_term:
            return
        if opts.linger:  # widens the gap a wrong order would show in
            time.sleep(0.3)
        say(box, f"{name} stopped")
        os._exit(0)
    for sig in stopping:
        signal.signal(sig, stop)
    say(box, f"{name} start {os.getpid()}")
    put(os.path.join(box, f"{name}.pid"), str(os.getpid()))
    put(os.path.join(box, f"{name}.notify"), os.environ.get("NOTIFY_SOCKET", "-"))
    if opts.orphan:
        orphan(box, name)
    if opts.ready:
        almost_ready(opts.ready)
    if opts.gate:
        wait_file(opts.gate)
    if opts.flood:
        flood(opts.flood)
    if opts.ready:
        get_ready(box, name, opts.ready)
    if opts.exit is not None:
        say(box, f"{name} exit {opts.exit}")
        sys.exit(opts.exit)
    while True:
        time.sleep(1)


def flood(size: int) -> None:
    """``size`` bytes of 1 KiB lines on stdout, then a last line saying so."""
    out = sys.stdout.buffer
    chunk = LINE * 256
    for _ in range(size // len(chunk)):
        out.write(chunk)
    out.write(b"FLOOD-END\n")
    out.flush()


if __name__ == "__main__":
    main()
