"""The probe port under abuse (part of ``make bench``):

26. a well-behaved ``GET /healthz`` on ``--health-port``, p50 and p99 of 500 calls 10 ms
    apart with the port quiet, then while it is abused (tests/support/flood.py: 1,100
    half-open connections, half of them part-way through a head, each opened again once
    it is dropped, at most RATE a second, and 50 more sending malformed heads, the
    Content-Length attacks among them); the ratio of the two p99s, measured in the same
    run. Beside them: how many descriptors root's supervisor held at most, and what the
    flood saw.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
INITD = [str(Path(PY).parent / "initd")]
UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
FLOOD = [PY, str(ROOT / "tests" / "support" / "flood.py")]
HELD, GARBAGE, CALLS = 1100, 50, 500
RATE = 5000  # connections the flood opens again a second: more would fill this host's
# conntrack table (each entry stays two minutes; at 20,000 a second it dropped packets)
PACE = 0.01  # seconds between two probes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def healthz(port: int) -> float | None:
    """Seconds for one whole 200 answer; None for none within 10 s."""
    start = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: probe\r\n\r\n")
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
    except OSError:
        return None
    return time.perf_counter() - start if answer.startswith(b"HTTP/1.0 200") else None


def series(port: int) -> tuple[float, float, int]:
    """p50 and p99 in ms of CALLS probes, PACE apart (the abuse goes on between them, as
    between a kubelet's), and how many got no answer."""
    samples, failed = [], 0
    for _ in range(CALLS):
        time.sleep(PACE)
        took = healthz(port)
        if took is None:
            failed += 1
        else:
            samples.append(took * 1000)
    samples.sort()
    if not samples:
        return float("nan"), float("nan"), failed
    return samples[len(samples) // 2], samples[max(0, int(len(samples) * 0.99) - 1)], failed


def boot(where: str) -> tuple[subprocess.Popen[bytes], int]:
    env = {**os.environ, "HOME": where, "INITD_SOCKET": f"{where}/initd.sock"}
    for _ in range(5):  # (a port free when we looked may be taken by the time initd binds)
        port = free_port()
        init = subprocess.Popen([*UNSHARE, *INITD, "--no-service", "--health-port", str(port),
                                 "--", "sleep", "1000"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while init.poll() is None and time.monotonic() < deadline:
            if listens(init, port) and healthz(port) is not None:
                return init, port
            time.sleep(0.05)
        init.kill()
        init.wait(30)
    raise RuntimeError("initd never served its probes")


def supervisor(init: subprocess.Popen[bytes]) -> psutil.Process:
    return psutil.Process(init.pid).children()[0].children()[0]  # unshare, PID 1, it


def listens(init: subprocess.Popen[bytes], port: int) -> bool:
    """Ours, not another initd that answers on that port until ours has bound it."""
    try:
        return any(conn.status == psutil.CONN_LISTEN and conn.laddr.port == port
                   for conn in supervisor(init).net_connections(kind="tcp"))
    except (IndexError, psutil.Error):
        return False


def most_fds(pid: int, stop: threading.Event, seen: list[int]) -> None:
    while not stop.wait(0.05):
        try:
            seen.append(len(os.listdir(f"/proc/{pid}/fd")))
        except OSError:
            return


def main() -> None:
    where = tempfile.mkdtemp(prefix="initd-bench-probeport-")
    init, port = boot(where)
    try:
        root = supervisor(init).pid
        quiet = series(port)
        flood = subprocess.Popen([*FLOOD, "127.0.0.1", str(port), str(HELD), str(GARBAGE),
                                  str(RATE)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert flood.stdout is not None and flood.stdin is not None
        assert flood.stdout.readline().strip() == "flooding"
        stop, seen = threading.Event(), [0]
        watcher = threading.Thread(target=most_fds, args=(root, stop, seen))
        watcher.start()
        abused = series(port)
        stop.set()
        watcher.join()
        flood.stdin.close()
        counts = flood.stdout.read().strip()
        flood.wait(60)
        alive = init.poll() is None and healthz(port) is not None
    finally:
        init.kill()  # (unshare passes no TERM on; --kill-child ends the namespace)
        init.wait(30)
        shutil.rmtree(where, ignore_errors=True)
    print(f"probeport /healthz, {CALLS} calls: quiet p50 {quiet[0]:.2f} ms, p99 {quiet[1]:.2f}"
          f" ms ({quiet[2]} unanswered) | abused ({HELD} half-open, {GARBAGE} sending "
          f"malformed heads) p50 {abused[0]:.2f} ms, p99 {abused[1]:.2f} ms ({abused[2]} "
          f"unanswered) | p99 ratio {abused[1] / quiet[1]:.1f}x")
    print(f"probeport root's supervisor held at most {max(seen)} descriptors; alive after: "
          f"{alive}; the flood: {counts}")


if __name__ == "__main__":
    from run import own_home  # bench/run.py: a HOME of the run's own

    with own_home():
        main()
