"""The probe port under abuse (part of ``make bench``):

26. a well-behaved ``GET /healthz`` on ``--health-port``, p50 and p99 of 500 calls 10 ms
    apart with the port quiet, then while it is abused (tests/support/flood.py: 1,100
    half-open connections, half of them part-way through a head, each opened again once
    it is dropped, at most RATE a second, and 50 more sending malformed heads, the
    Content-Length attacks among them); the ratio of the two p99s, measured in the same
    run. Beside them: how many descriptors root's supervisor held at most, and what the
    flood saw.
26b. the same probes, quiet and then while CHURNERS agent-like processes connect and
    close as fast as they can (tests/support/churn.py), in a network namespace of the
    initd's own (tests/support/netns.py: churn on the host's network would fill its
    conntrack table); the ratio of the two p99s, measured in the same run, the probes
    answered after a second (a kubelet's default timeout) as a share of all, root's
    supervisor's CPU during the churn as a share of a core, how often the listen queue
    overflowed, and how many connections the churn made.
"""

from __future__ import annotations

import json
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
CHURN = [PY, str(ROOT / "tests" / "support" / "churn.py")]
KUBELET = [PY, str(ROOT / "tests" / "support" / "kubelet.py")]
NETNS = [PY, str(ROOT / "tests" / "support" / "netns.py")]
CHURNERS = 3  # the red team's: three processes made 7-8 of 12-18 probes time out
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


def series(port: int) -> tuple[float, float, int, int]:
    """p50 and p99 in ms of CALLS probes, PACE apart (the abuse goes on between them, as
    between a kubelet's), how many got no answer, and how many got it after a second (a
    kubelet's timeoutSeconds: 1, the default, would have failed them)."""
    samples, failed = [], 0
    for _ in range(CALLS):
        time.sleep(PACE)
        took = healthz(port)
        if took is None:
            failed += 1
        else:
            samples.append(took * 1000)
    samples.sort()
    late = sum(sample > 1000 for sample in samples)
    if not samples:
        return float("nan"), float("nan"), failed, late
    return (samples[len(samples) // 2], samples[max(0, int(len(samples) * 0.99) - 1)], failed,
            late)


def boot(where: str, netns: bool = False) -> tuple[subprocess.Popen[bytes], int]:
    env = {**os.environ, "HOME": where, "INITD_SOCKET": f"{where}/initd.sock"}
    unshare = [UNSHARE[0], "--net", *UNSHARE[1:], *NETNS] if netns else UNSHARE
    for _ in range(5):  # (a port free when we looked may be taken by the time initd binds)
        port = free_port()
        init = subprocess.Popen([*unshare, *INITD, "--no-service", "--health-port", str(port),
                                 "--", "sleep", "1000"], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        up = [*inside(init), *KUBELET, str(port), "--until-ok", "30"] if netns else None
        if up and subprocess.run(up).returncode == 0:  # (the port is its alone: psutil
            return init, port  # would read the host's /proc/net, and find nothing there)
        deadline = time.monotonic() + 30
        while not netns and init.poll() is None and time.monotonic() < deadline:
            if listens(init, port) and healthz(port) is not None:
                return init, port
            time.sleep(0.05)
        init.kill()
        init.wait(30)
    raise RuntimeError("initd never served its probes")


def inside(init: subprocess.Popen[bytes]) -> list[str]:
    """What runs a command in ``init``'s network namespace (unshare's child's)."""
    deadline = time.monotonic() + 10
    while not psutil.Process(init.pid).children() and time.monotonic() < deadline:
        time.sleep(0.01)
    pid1 = psutil.Process(init.pid).children()[0].pid
    return ["nsenter", f"--net=/proc/{pid1}/ns/net", "--"]


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


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def overflows(pid: int) -> int:
    with open(f"/proc/{pid}/net/netstat") as f:
        names, values = [line.split() for line in f if line.startswith("TcpExt:")][:2]
    return int(values[names.index("ListenOverflows")])


def series_in(init: subprocess.Popen[bytes], port: int) -> tuple[float, float, int, int]:
    """``series`` run inside ``init``'s network namespace."""
    out = subprocess.run([*inside(init), PY, __file__, "series", str(port)],
                         capture_output=True, text=True, check=True)
    p50, p99, failed, late = json.loads(out.stdout)
    return float(p50), float(p99), int(failed), int(late)


def churned() -> None:
    """26b: the probes quiet, then churned, one initd in a network namespace of its own."""
    where = tempfile.mkdtemp(prefix="initd-bench-probechurn-")
    init, port = boot(where, netns=True)
    churners: list[subprocess.Popen[str]] = []
    try:
        root = supervisor(init).pid
        quiet = series_in(init, port)
        churn = [*inside(init), *CHURN, "127.0.0.1", str(port), "churn", "64"]
        for _ in range(CHURNERS):
            churners.append(subprocess.Popen(churn, stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, text=True))
        for churner in churners:
            assert churner.stdout is not None and churner.stdout.readline() == "churning\n"
        cpu, overflowed, started = cpu_seconds(root), overflows(root), time.monotonic()
        abused = series_in(init, port)
        share = (cpu_seconds(root) - cpu) / (time.monotonic() - started)
        overflowed = overflows(root) - overflowed
    finally:
        made = 0
        for churner in churners:
            assert churner.stdin is not None and churner.stdout is not None
            churner.stdin.close()
            made += sum(int(word.split("=")[1]) for word in churner.stdout.read().split()
                        if word.startswith("connected="))
            churner.wait(60)
        init.kill()
        init.wait(30)
        shutil.rmtree(where, ignore_errors=True)
    print(f"probeport /healthz, {CALLS} calls, own netns: quiet p50 {quiet[0]:.2f} ms, p99 "
          f"{quiet[1]:.2f} ms ({quiet[2]} unanswered, {quiet[3]} over 1 s) | churned "
          f"({CHURNERS} processes connecting and closing as fast as they can) p50 "
          f"{abused[0]:.2f} ms, p99 {abused[1]:.2f} ms ({abused[2]} unanswered, {abused[3]} "
          f"over 1 s: {abused[3] / CALLS:.0%}) | p99 ratio {abused[1] / quiet[1]:.1f}x")
    print(f"probeport the churn: {made} connections; root's supervisor {share:.0%} of a "
          f"core; the listen queue overflowed {overflowed} times")


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
    churned()


if __name__ == "__main__":
    if sys.argv[1:2] == ["series"]:  # (inside a network namespace: churned)
        print(json.dumps(series(int(sys.argv[2]))))
        sys.exit(0)
    from run import own_home  # bench/run.py: a HOME of the run's own

    with own_home():
        main()
