"""Start, stop and probe benchmarks (part of ``make bench``; issue 13's figures):

19. an exec probe, ``initd ready``, vs ``python3 -c pass`` (goal <= 1.5x); an httpGet
    to the supervisor's ``/readyz`` (goal p99 <= 2 ms);
20. ``podman run --rm`` of initd's image running ``/bin/true``, the hook service on (the
    default), vs the same image with ``--entrypoint /bin/true`` (goal <= 1.10x), when
    ``make image`` has built it.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PY = sys.executable
INITD = [str(Path(PY).parent / "initd")]  # the console script, as a probe runs it
UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
IMAGE = "localhost/initd:dev"


def median_ms(argv: list[str], runs: int, **kwargs: object) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       **kwargs)  # type: ignore[call-overload]
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def probes(runs: int = 40, gets: int = 500) -> None:
    """initd as PID 1 with a ready agent, then the two kinds of probe against it."""
    where = tempfile.mkdtemp(prefix="initd-bench-probes-")
    sock, port = f"{where}/initd.sock", free_port()
    env = {**os.environ, "HOME": where, "INITD_SOCKET": sock}
    ws = Path(where, "ws")
    (ws / ".discobot" / "hooks").mkdir(parents=True)
    init = subprocess.Popen([*UNSHARE, *INITD, "--workspace", str(ws), "--health-port",
                             str(port), "--", "sleep", "1000"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while subprocess.run([*INITD, "ready"], env=env, capture_output=True).returncode:
            if time.monotonic() > deadline:
                raise RuntimeError("initd never got ready")
            time.sleep(0.05)
        floor = median_ms([PY, "-c", "pass"], runs)
        ready = median_ms([*INITD, "ready"], runs, env=env)
        print(f"probes    exec `initd ready`: {ready:.1f} ms | python3 -c pass {floor:.1f} ms"
              f" | ratio {ready / floor:.2f}x (goal <= 1.5x)"
              f"{'' if ready / floor <= 1.5 else ' MISSED'}")
        samples = []
        for _ in range(gets):
            start = time.perf_counter()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
                r.read()
            samples.append((time.perf_counter() - start) * 1000)
        samples.sort()
        p50, p99 = samples[len(samples) // 2], samples[int(len(samples) * 0.99) - 1]
        print(f"probes    httpGet /readyz, {gets} calls: p50 {p50:.2f} ms, p99 {p99:.2f} ms "
              f"(goal p99 <= 2 ms){'' if p99 <= 2 else ' MISSED'}")
    finally:
        init.kill()  # (unshare passes no TERM on; --kill-child ends the namespace)
        init.wait(30)
        shutil.rmtree(where, ignore_errors=True)


def podman_true(runs: int = 7) -> None:
    if shutil.which("podman") is None or subprocess.run(
            ["podman", "image", "exists", IMAGE]).returncode:
        print("startstop no image (make image builds it): podman run not measured")
        return
    plain: list[float] = []
    initd: list[float] = []
    for _ in range(runs):  # interleaved: the machine's moods fall on both alike
        plain.append(median_ms(["podman", "run", "--rm", "--entrypoint", "/bin/true",
                                IMAGE], 1))
        initd.append(median_ms(["podman", "run", "--rm", IMAGE, "/bin/true"], 1))
    a, b = statistics.median(initd), statistics.median(plain)
    print(f"startstop podman run --rm {IMAGE} /bin/true (service on): {a:.0f} ms | "
          f"--entrypoint /bin/true {b:.0f} ms | ratio {a / b:.2f}x (goal <= 1.10x)"
          f"{'' if a / b <= 1.10 else ' MISSED'}")


def main() -> None:
    probes()
    podman_true()


if __name__ == "__main__":
    from run import own_home  # bench/run.py: a HOME of the run's own

    with own_home():
        main()
