"""``make bench``: initd's speed and memory goals, as ratios against baselines measured in
the same run on the same machine (never as timed unit tests).

1. boot: ``initd -- true`` vs ``python3 -c pass`` (goal <= 2.5x), vs the floor of any
   forked-Python supervisor (bench/floor.py) and vs ``tini -- true``
2. reaping: 5,000 double-fork orphans; zombies left at +0.5 s (goal 0) and PID 1's CPU
   seconds vs tini's (goal <= 2x)
3. idle RSS of PID 1 and of the supervisor (goal PID 1 <= 12 MiB), beside tini's and a
   bare sleeping python's
4. SIGTERM -> CMD handler latency through PID 1 and the supervisor, p50/p99 over 200
   runs (goal p99 <= 5 ms), beside tini's
5. 50 trivial session hooks: initd's session phase vs a bash loop over the same scripts
   (goal <= 1.3x)
6. the supervisor's RSS while a session hook prints 1 GB (goal: grows < 20 MiB)
7-9. the hook service's (bench/service.py); 10-11. lifecycle events' (bench/events.py);
12-13. the images' (bench/container.py); 14-18. faults and abuse (bench/faults.py);
19-22. exec and HTTP probes; podman run to exit, to ready and podman stop, initd vs
       --entrypoint and vs tini (bench/startstop.py)
26. /healthz's p50/p99 while the probe port is abused, against the same port quiet;
    26b. while agent-like processes churn connections to it (bench/probeport.py)
34. root's supervisor's CPU while /metrics is scraped at 10 Hz, against /healthz probed
    at the same pace (bench/metrics.py)
32. initd emit --from AGENT's round trip with one guard, for each agent, against the
    same hook spawned directly (bench/agents.py)
33. a 16 MiB Write event: the hook service's peak RSS against the payload and against
    its idle RSS (bench/payload.py)
29-31. a start's CPU and time to the agent, quiet and with every core busy, and where
    the CPU goes (bench/cpu.py)
27-28. a devcontainer.json command's output: a waited stage printing 3 million lines
    against the same stage silent, and root's CPU under a `yes &` daemon against the
    daemon's own (bench/lifecycle_output.py)
34-35. two services' start and stop, against supervisord's (bench/services.py)
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
INITD = [str(Path(PY).parent / "initd")]  # the console script, as users run it
TINI = shutil.which("tini")
UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
ORPHANS = [PY, str(ROOT / "tests" / "support" / "orphans.py")]
STAMP = [PY, str(ROOT / "bench" / "term_stamp.py")]
FLOOR = [PY, str(ROOT / "bench" / "floor.py")]


def wall(cases: dict[str, list[str]], runs: int) -> dict[str, float]:
    """Median wall time in seconds of each command, the runs interleaved so that the
    machine's moods fall on every case alike."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, argv in cases.items():
            start = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(samples) for name, samples in times.items()}


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "n/a"


def boot(runs: int = 60) -> None:
    cases = {"python": [PY, "-c", "pass"], "floor": [*FLOOR, "--", "true"],
             "initd": [*INITD, "--", "true"]}
    if TINI:
        cases["tini"] = [TINI, "-s", "--", "true"]
    t = wall(cases, runs)
    print(f"boot      initd -- true {t['initd'] * 1000:.1f} ms | python3 -c pass "
          f"{t['python'] * 1000:.1f} ms | ratio {ratio(t['initd'], t['python'])} (goal <= 2.5x)")
    print(f"          floor (fork + argparse + subprocess, bench/floor.py) "
          f"{t['floor'] * 1000:.1f} ms = {ratio(t['floor'], t['python'])} of python | "
          f"initd/floor {ratio(t['initd'], t['floor'])}")
    if TINI:
        print(f"          tini -- true {t['tini'] * 1000:.1f} ms | initd/tini "
              f"{ratio(t['initd'], t['tini'])}")


def storm(init: list[str], n: int) -> tuple[int, float]:
    out = subprocess.run([*UNSHARE, *init, "--", *ORPHANS, "-n", str(n), "--settle", "0.5",
                          "--pid1-cpu"], capture_output=True, text=True, timeout=300)
    zombies = int(re.search(r"zombies=(\d+)", out.stdout).group(1))  # type: ignore[union-attr]
    cpu = float(re.search(r"pid1_cpu=([\d.]+)", out.stdout).group(1))  # type: ignore[union-attr]
    return zombies, cpu


def reaping(n: int = 5000) -> None:
    zombies, cpu = storm(INITD, n)
    line = f"reaping   {n} orphans: zombies at +0.5 s {zombies} (goal 0) | PID 1 CPU {cpu:.2f} s"
    if TINI:
        tini_zombies, tini_cpu = storm([TINI], n)
        line += (f" | tini: zombies {tini_zombies}, CPU {tini_cpu:.2f} s | initd/tini "
                 f"{ratio(cpu, max(tini_cpu, 0.01))} (goal <= 2x)")
    print(line)


def idle_tree(init: list[str]) -> list[psutil.Process]:
    """Start ``init -- sleep`` as PID 1; return [PID 1, its children...] once sleep runs."""
    # stderr: unshare reports the SIGKILL we end it with; that is our doing, not news.
    proc = subprocess.Popen([*UNSHARE, *init, "--", "sleep", "30"], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        tree = psutil.Process(proc.pid).children(recursive=True)
        if any(p.name() == "sleep" for p in tree):
            time.sleep(0.3)  # let start-up settle
            return tree
        time.sleep(0.02)
    raise RuntimeError("sleep never started")


def rss_mib(p: psutil.Process) -> float:
    return p.memory_info().rss / 2**20


def memory() -> None:
    bare = subprocess.Popen([PY, "-c", "import signal; signal.pause()"])
    time.sleep(0.5)
    base = rss_mib(psutil.Process(bare.pid))
    bare.kill()
    tree = idle_tree(INITD)
    pid1, supervisor = rss_mib(tree[0]), rss_mib(tree[1])
    for p in tree:
        p.kill()
    line = (f"memory    PID 1 {pid1:.1f} MiB (goal <= 12) | supervisor {supervisor:.1f} MiB"
            f" | bare python {base:.1f} MiB | PID 1/bare {ratio(pid1, base)}")
    if TINI:
        tree = idle_tree([TINI])
        line += f" | tini {rss_mib(tree[0]):.1f} MiB"
        for p in tree:
            p.kill()
    print(line)


def term_latency(init: list[str], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        proc = subprocess.Popen([*UNSHARE, *init, "--", *STAMP], stdout=subprocess.PIPE,
                                text=True)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        pid1 = psutil.Process(proc.pid).children()[0].pid
        sent = time.monotonic()
        os.kill(pid1, signal.SIGTERM)
        line = proc.stdout.readline()
        samples.append(float(line.split()[1]) - sent)
        proc.wait(10)
    return samples


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return (statistics.median(ordered) * 1000,
            ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000)


def latency(runs: int = 200) -> None:
    p50, p99 = percentiles(term_latency(INITD, runs))
    line = f"signals   TERM -> CMD handler over {runs} runs: p50 {p50:.2f} ms, p99 {p99:.2f} ms"
    line += " (goal p99 <= 5 ms)"
    if TINI:
        t50, t99 = percentiles(term_latency([TINI], runs))
        line += f" | tini p50 {t50:.2f} ms, p99 {t99:.2f} ms"
    print(line)


def hook_workspace(root: Path, bodies: list[str]) -> Path:
    hooks = root / ".discobot" / "hooks"
    hooks.mkdir(parents=True)
    for i, body in enumerate(bodies):
        path = hooks / f"h{i:03d}.sh"
        path.write_text(f"#!/bin/sh\n#---\n# type: session\n#---\n{body}\n")
        path.chmod(0o755)
    return root


def session_phase_ms(ws: Path) -> float:
    out = subprocess.run([*INITD, "-v", "--log-format", "json", "--workspace", str(ws),
                          "--hooks-dir", str(ws / "none"), "--session-id", "bench",
                          "--no-service", "--", "true"], capture_output=True, text=True,
                         check=True)
    for line in out.stderr.splitlines():
        event = json.loads(line) if line.startswith("{") else {}
        if event.get("event") == "session hooks" and "duration_ms" in event:
            return float(event["duration_ms"])
    raise RuntimeError(out.stderr)


def session_hooks(n: int = 50, runs: int = 7) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = hook_workspace(Path(tmp), ["true"] * n)
        loop = ["bash", "-c", f'for f in {ws}/.discobot/hooks/*; do "$f"; done']
        ours = statistics.median(session_phase_ms(ws) for _ in range(runs))
        bash = wall({"bash": loop}, runs)["bash"] * 1000
    print(f"hooks     {n} trivial session hooks: initd's session phase {ours:.0f} ms | bash "
          f"loop {bash:.0f} ms | ratio {ratio(ours, bash)} (goal <= 1.3x)")


def hook_output_memory() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = hook_workspace(Path(tmp), ["head -c 1073741824 /dev/zero"])
        proc = subprocess.Popen([*INITD, "--workspace", str(ws), "--hooks-dir",
                                 str(ws / "none"), "--session-id", "bench", "--no-service",
                                 "--", "true"])
        supervisor = None
        samples: list[float] = []
        while proc.poll() is None:
            try:
                supervisor = supervisor or psutil.Process(proc.pid).children()[0]
                samples.append(rss_mib(supervisor))
            except (IndexError, psutil.NoSuchProcess):
                pass
            time.sleep(0.02)
        log = Path.home() / ".discobot" / "bench" / "hooks" / "output" / "h000.log"
        size = log.stat().st_size / 2**20
    shutil.rmtree(Path.home() / ".discobot" / "bench", ignore_errors=True)
    print(f"memory    a session hook printing 1 GB: supervisor RSS {samples[0]:.1f} -> "
          f"{max(samples):.1f} MiB, grew {max(samples) - samples[0]:.1f} MiB (goal < 20); "
          f"log capped at {size:.1f} MiB")


def main() -> int:
    # What users run is an installed wheel, byte-compiled by pip; a checkout under
    # PYTHONDONTWRITEBYTECODE=1 would recompile initd's sources on every start.
    # (PYTHONPYCACHEPREFIX would keep the tree clean but moves the stdlib's cache too.)
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "initd")], check=True)
    try:
        with own_home():
            run_all()
    finally:  # (every package's cache: compileall made them all)
        for cache in (ROOT / "initd").rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)
    return 0


@contextlib.contextmanager
def own_home() -> Iterator[None]:
    """A HOME of the run's own, as the tests have: the state initd keeps for what the
    benchmarks run (~/.discobot: hook status, session records) never lands in the real
    home. (A benchmark once left an empty ~/.discobot/sessions there.)"""
    real = os.environ.get("HOME")
    os.environ["HOME"] = tempfile.mkdtemp(prefix="initd-bench-home-")
    try:
        yield
    finally:
        shutil.rmtree(os.environ["HOME"], ignore_errors=True)
        if real is None:
            del os.environ["HOME"]
        else:
            os.environ["HOME"] = real


def run_all() -> None:
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores, "
          f"{psutil.virtual_memory().total / 2**30:.0f} GiB, Linux {platform.release()}, "
          f"Python {platform.python_version()}, tini {'found' if TINI else 'not installed'}")
    boot()
    import cpu  # bench/cpu.py: a start's CPU, and its time to the agent, quiet and busy

    cpu.run()
    reaping()
    memory()
    latency()
    session_hooks()
    hook_output_memory()
    import events  # bench/events.py: lifecycle events
    import service  # bench/service.py: the hook service's own benchmarks

    service.main()
    events.main()
    import payload  # bench/payload.py: a 16 MiB event's cost in the service's memory

    payload.main()
    import agents  # bench/agents.py: initd emit --from AGENT, for each agent

    agents.main()
    import container  # bench/container.py: the images, when make image built them

    container.main()
    import faults  # bench/faults.py: kill -9s, a fork storm, fuzzed hooks, socket abuse

    faults.main()
    import startstop  # bench/startstop.py: exec and HTTP probes, podman run /bin/true

    startstop.main()
    import probeport  # bench/probeport.py: /healthz while the probe port is abused

    probeport.main()
    import metrics  # bench/metrics.py: /metrics scraped at 10 Hz, against /healthz

    metrics.main()
    import bundle  # bench/bundle.py: the bundle's size, boot, and a Node image's start

    bundle.main()
    import lifecycle_output  # bench/lifecycle_output.py: devcontainer.json output's cost

    lifecycle_output.main()
    import services  # bench/services.py: two services' start and stop against supervisord

    services.main()


if __name__ == "__main__":
    sys.exit(main())
