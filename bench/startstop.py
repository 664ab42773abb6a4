"""Start, stop and probe benchmarks (part of ``make bench``; issue 13's figures):

19. an exec probe, ``initd ready``, vs ``python3 -c pass`` (goal <= 1.5x); an httpGet
    to the supervisor's ``/readyz`` against a bare single-threaded server (bare_http.py),
    one request to each in turn, quiet and with a busy loop per core (goal p99 <= 1.1x the
    bare server's, both);
20. ``podman run --rm`` of initd's image running ``/bin/true``, the hook service on (the
    default), vs the same image with ``--entrypoint /bin/true`` (goal <= 1.10x), when
    ``make image`` has built it;
21. ``podman run`` to the agent ready (its port answers), initd vs tini as the
    entrypoint of the same image (goal <= +25 ms at the median), quiet and with a CPU
    burner per core (goal <= +60 ms);
22. ``podman stop`` of an idle demo container until it is gone, initd vs tini (goal
    <= +20 ms at the median).

21 and 22 use initd's image in its default configuration (a workspace, so the hook
service runs; no hooks) with the demo's agent API and the host's tini-static added
(``make bench`` installs tini), on the host's network on a free port, so that "its port
answers" is a connect from here, with no port forwarding in the figure. tini runs the
agent as the same user (``--user 1000``), as initd does.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

PY = sys.executable
INITD = [str(Path(PY).parent / "initd")]  # the console script, as a probe runs it
UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
TAG = os.environ.get("INITD_IMAGE_TAG", "dev")  # tools/build-images.sh's tag (a branch's own)
IMAGE = f"localhost/initd:{TAG}"
TINI_IMAGE = f"localhost/initd-bench-tini:{TAG}"  # initd's image, the demo's agent API, tini
API = "/opt/demo/agent-api.py"
AGENT_API = Path(__file__).resolve().parent.parent / "images" / "demo" / "agent-api.py"


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


# what a kubelet's httpGet sends (Go's client: these headers, this order)
PROBE = (b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: kube-probe/1.30\r\n"
         b"Accept: */*\r\nConnection: close\r\n\r\n")


def get_ms(port: int) -> float:
    """One probe of /readyz on ``port``, as a kubelet makes it (a connection, the request,
    the answer read to its end): milliseconds, or an error if it was not a 200."""
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(PROBE)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    took = (time.perf_counter() - start) * 1000
    if not answer.startswith((b"HTTP/1.0 200 ", b"HTTP/1.1 200 ")):
        raise RuntimeError(f"not ready: {answer[:80]!r}")
    return took


def get_percentiles(ports: list[int], gets: int) -> list[tuple[float, float]]:
    """p50 and p99 in milliseconds of ``gets`` probes of /readyz on each of ``ports``, one
    to each in turn (the machine's moods fall on all alike)."""
    for port in ports:
        until(lambda port=port: _answers_probe(port), "a probe's answer", 10)  # (starting)
    samples: list[list[float]] = [[] for _ in ports]
    for _ in range(gets):
        for port, mine in zip(ports, samples, strict=True):
            mine.append(get_ms(port))
    return [(statistics.median(mine), sorted(mine)[int(len(mine) * 0.99) - 1])
            for mine in samples]


def _answers_probe(port: int) -> bool:
    try:
        get_ms(port)
        return True
    except (OSError, RuntimeError):
        return False


def probes(runs: int = 40, gets: int = 3000) -> None:
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
        from cpu import burners  # bench/cpu.py: a busy loop per core

        bare_port = free_port()  # the floor: a bare server, alone in its process
        bare = subprocess.Popen([PY, str(Path(__file__).parent / "bare_http.py"),
                                 str(bare_port)])
        try:
            for label, busy in (("quiet", contextlib.nullcontext()), ("busy", burners())):
                with busy:
                    (p50, p99), (bare50, bare99) = get_percentiles([port, bare_port], gets)
                print(f"probes    httpGet /readyz, {gets} calls, {label}: p50 {p50:.2f} ms, "
                      f"p99 {p99:.2f} ms | a bare server's p50 {bare50:.2f} ms, p99 "
                      f"{bare99:.2f} ms | p99 ratio {p99 / bare99:.2f}x (goal <= 1.1x)"
                      f"{'' if p99 / bare99 <= 1.1 else ' MISSED'}")
        finally:
            bare.kill()
            bare.wait()
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


def podman(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True,
                          timeout=timeout)


def tini_image() -> bool:
    """initd's image with the demo's agent API and the host's static tini in it (built
    on every run, from the image as it is now; no network)."""
    if not os.path.exists("/usr/bin/tini-static"):
        return False
    with tempfile.TemporaryDirectory(prefix="initd-bench-tini-") as where:
        shutil.copy("/usr/bin/tini-static", os.path.join(where, "tini"))
        shutil.copy(AGENT_API, os.path.join(where, "agent-api.py"))
        Path(where, "Containerfile").write_text(
            f"FROM {IMAGE}\nCOPY tini /usr/bin/tini\nCOPY agent-api.py {API}\n")
        return podman("build", "--quiet", "--network=none", "-t", TINI_IMAGE,
                      where).returncode == 0


def entrypoints(port: int) -> dict[str, list[str]]:
    """podman run arguments of the two cases: the same image, agent and network."""
    common = ["--network=host", "-e", f"AGENT_PORT={port}"]
    return {"initd": [*common, "-e", f"INITD_READY_PORT={port}", TINI_IMAGE, API],
            "tini": [*common, "--user", "1000", "--entrypoint", "/usr/bin/tini", TINI_IMAGE,
                     "--", API]}


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def until(done: Callable[[], bool], what: str, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {limit:g} s")
        time.sleep(0.002)


def start_to_ready(args: list[str], port: int) -> tuple[float, str]:
    """Milliseconds from ``podman run -d`` to the agent's port answering; the container's
    name (still running)."""
    name = f"initd-bench-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    run = podman("run", "-d", "--name", name, *args)
    if run.returncode:
        raise RuntimeError(f"podman run: {run.stderr.strip()}")
    until(lambda: answers(port), "the agent's port")
    return (time.perf_counter() - started) * 1000, name


def stop_ms(name: str) -> float:
    """Milliseconds of ``podman stop`` (TERM, then the container's exit)."""
    started = time.perf_counter()
    podman("stop", "-t", "10", name)
    took = (time.perf_counter() - started) * 1000
    podman("rm", "-f", "-t", "0", name)
    return took


def podman_ready_and_stop(runs: int = 15) -> None:
    if shutil.which("podman") is None or podman("image", "exists", IMAGE).returncode:
        print("startstop no image (make image builds it): ready/stop not measured")
        return
    if not tini_image():
        print("startstop no tini-static on the host (make bench installs tini): ready/stop "
              "vs tini not measured")
        return
    ready: dict[str, list[float]] = {"initd": [], "tini": []}
    stop: dict[str, list[float]] = {"initd": [], "tini": []}
    for _ in range(runs):  # interleaved: the machine's moods fall on both alike
        for case in ("tini", "initd"):
            port = free_port()
            took, name = start_to_ready(entrypoints(port)[case], port)
            ready[case].append(took)
            time.sleep(0.2)  # idle, as a container is before it is stopped
            stop[case].append(stop_ms(name))
    from cpu import burners  # bench/cpu.py: a busy loop per core

    busy: dict[str, list[float]] = {"initd": [], "tini": []}
    with burners():  # (a node starting sandboxes by the hundred)
        for _ in range(runs):
            for case in ("tini", "initd"):
                port = free_port()
                took, name = start_to_ready(entrypoints(port)[case], port)
                busy[case].append(took)
                podman("rm", "-f", "-t", "0", name)
    for label, figures, goal in (("podman run to agent ready (its port answers)", ready, 25),
                                 ("podman run to agent ready, every core busy", busy, 60),
                                 ("podman stop of an idle container", stop, 20)):
        a, b = statistics.median(figures["initd"]), statistics.median(figures["tini"])
        print(f"startstop {label}, median of {runs}: initd {a:.0f} ms | tini {b:.0f} ms | "
              f"+{a - b:.0f} ms (goal <= +{goal} ms){'' if a - b <= goal else ' MISSED'}")


def main() -> None:
    probes()
    podman_true()
    podman_ready_and_stop()


if __name__ == "__main__":
    from run import own_home  # bench/run.py: a HOME of the run's own

    with own_home():
        main()
