"""/metrics on the probe port (part of ``make bench``):

36. root's supervisor's CPU, as a share of a core, while ``GET /metrics`` is scraped at
    10 Hz for WINDOW seconds, against the same supervisor while ``GET /healthz`` is
    probed at the same pace (the baseline, measured in the same run, on the same initd),
    and with nothing asking (idle); then /metrics at 100 Hz, past the body's freshness
    (supervisor/metrics.py: FRESH), which a scraper cannot make root render more often.
    Beside them: one scrape's latency (p50, p99), the body's size, and the supervisor's
    RSS before the first scrape and after (what prometheus_client costs it, once).
36b. the agent's attack on it: its hook service's channel taken (as the agent can, with
    pidfd_getfd) and flooded for FLOOD seconds with the largest ``metrics`` summaries the
    channel takes (its 16 KiB line), against the same flood of ``ready`` messages
    (which root reads at the same rate and does nothing with), in the same run: root's
    supervisor's CPU as a share of a core.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from initd.process.channel import MAX_REQUEST

PY = sys.executable
INITD = [str(Path(PY).parent / "initd")]
UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
WINDOW = 20.0  # seconds per measurement: 200 scrapes at 10 Hz (a clock tick is 10 ms)
GOAL = 0.01  # of a core, at 10 Hz
FLOOD = 10.0  # seconds of each flood
PIDFD_GETFD = 438


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(port: int, path: str) -> tuple[float, int]:
    """Seconds for one whole 200 answer, and its body's size."""
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.0 200"), answer[:200]
    return time.perf_counter() - start, len(answer.partition(b"\r\n\r\n")[2])


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def share(port: int, root: int, path: str | None, hz: float) -> tuple[float, list[float]]:
    """The supervisor's CPU over WINDOW as a share of a core, ``path`` asked ``hz`` times a
    second (None: nothing asked); and the latencies."""
    took: list[float] = []
    before, start = cpu_seconds(root), time.monotonic()
    due = start
    while (now := time.monotonic()) < start + WINDOW:
        if path is None:
            time.sleep(start + WINDOW - now)
            break
        took.append(get(port, path)[0])
        due += 1 / hz
        time.sleep(max(0.0, due - time.monotonic()))
    return (cpu_seconds(root) - before) / (time.monotonic() - start), took


def boot(where: str, *more: str) -> tuple[subprocess.Popen[bytes], int, int]:
    env = {**os.environ, "HOME": where, "INITD_SOCKET": f"{where}/initd.sock"}
    for _ in range(5):
        port = free_port()
        init = subprocess.Popen([*UNSHARE, *INITD, *(more or ("--no-service",)),
                                 "--health-port", str(port), "--", "sleep", "1000"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while init.poll() is None and time.monotonic() < deadline:
            try:
                get(port, "/healthz")
                root = psutil.Process(init.pid).children()[0].children()[0].pid
                return init, port, root
            except (OSError, AssertionError, IndexError):
                time.sleep(0.05)
        init.kill()
        init.wait(30)
    raise RuntimeError("initd never served its probes")


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * q) - 1)] * 1000


def main() -> None:
    where = tempfile.mkdtemp(prefix="initd-bench-metrics-")
    init, port, root = boot(where)
    try:
        rss_before = psutil.Process(root).memory_info().rss
        get(port, "/metrics")  # (the library loaded: its one-time cost is not per scrape)
        rss_after = psutil.Process(root).memory_info().rss
        size = get(port, "/metrics")[1]
        idle, _ = share(port, root, None, 0)
        healthz, _ = share(port, root, "/healthz", 10)
        scraped, took = share(port, root, "/metrics", 10)
        fast, _ = share(port, root, "/metrics", 100)
    finally:
        init.kill()
        init.wait(30)
        shutil.rmtree(where, ignore_errors=True)
    print(f"metrics /metrics at 10 Hz for {WINDOW:g} s: root's supervisor {scraped:.2%} of a "
          f"core | /healthz at 10 Hz (baseline, same run) {healthz:.2%} | idle {idle:.2%} | "
          f"ratio /metrics:/healthz {scraped / healthz if healthz else float('nan'):.2f}x | "
          f"goal <= {GOAL:.0%}: {'met' if scraped <= GOAL else 'NOT met'}")
    times = fast / scraped if scraped else float("nan")
    print(f"metrics /metrics at 100 Hz: {fast:.2%} of a core ({times:.1f}x the 10 Hz figure, "
          f"for 10x the scrapes: renders at most once a second) | a scrape p50 "
          f"{p(took, 0.5):.2f} ms, p99 {p(took, 0.99):.2f} ms | body {size} bytes | "
          f"supervisor RSS {rss_before / 2**20:.1f} MiB before the first scrape, "
          f"{rss_after / 2**20:.1f} MiB after")

    flooded()


def channel_of(root: int) -> socket.socket:
    """The hook service's end of its channel, taken as the agent would (pidfd_getfd)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for child in psutil.Process(root).children():
            argv = child.cmdline()
            if "--channel-fd" in argv:
                libc = ctypes.CDLL(None, use_errno=True)
                pidfd = os.pidfd_open(child.pid)
                fd = libc.syscall(PIDFD_GETFD, pidfd, int(argv[argv.index("--channel-fd") + 1]),
                                  0)
                os.close(pidfd)
                return socket.socket(fileno=fd)
        time.sleep(0.05)
    raise RuntimeError("no hook service")


def flood_share(root: int, line: bytes) -> float:
    """Root's supervisor's CPU as a share of a core while ``line`` floods the channel."""
    channel = channel_of(root)
    channel.settimeout(1)
    before, start = cpu_seconds(root), time.monotonic()
    while time.monotonic() < start + FLOOD:
        try:
            channel.sendall(line)
        except TimeoutError:
            continue  # (root reads at its pace: the rest waits in the socket)
        except OSError:
            break
    taken = (cpu_seconds(root) - before) / (time.monotonic() - start)
    channel.close()
    return taken


def summary(size: int) -> bytes:
    """The largest ``metrics`` summary under ``size`` bytes: label sets up to the bound."""
    entries: list[list[object]] = []
    line = b""
    for n in range(256):
        entries.append([f"format{n}", "pre_tool", [2**40] * 15, 1.5])
        more = json.dumps({"op": "metrics", "counts": {"durations": entries}}).encode() + b"\n"
        if len(more) >= size:
            break
        line = more
    return line


def flooded() -> None:
    """36b: the flood of the largest summaries against one of ready messages."""
    where = tempfile.mkdtemp(prefix="initd-bench-metrics-flood-")
    ws = Path(where, "ws")
    (ws / ".discobot" / "hooks").mkdir(parents=True)
    big = summary(MAX_REQUEST)
    shares = {}
    try:
        for name, line in (("ready", b'{"op": "ready", "pid": 1}\n' * (len(big) // 26)),
                           ("metrics", big)):
            init, _, root = boot(where, "--workspace", str(ws), "--state-dir",
                                 f"{where}/state")
            try:
                shares[name] = flood_share(root, line)
            finally:
                init.kill()
                init.wait(30)
    finally:
        shutil.rmtree(where, ignore_errors=True)
    print(f"metrics the hook service's channel flooded for {FLOOD:g} s with {len(big)}-byte "
          f"metrics summaries: root's supervisor {shares['metrics']:.1%} of a core | the same "
          f"flood of ready messages (baseline, same run) {shares['ready']:.1%} | ratio "
          f"{shares['metrics'] / shares['ready'] if shares['ready'] else float('nan'):.2f}x")


if __name__ == "__main__":
    from run import own_home  # bench/run.py: a HOME of the run's own

    with own_home():
        main()
