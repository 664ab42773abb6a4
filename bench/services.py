"""initd's services against supervisord (run as root: ``.venv/bin/python bench/services.py
[RUNS]``; ``make bench`` runs it); each figure beside supervisord's, measured in the same
run, the two interleaved (bench/README.md).

34. the start: PID 1 of a new PID namespace starting three programs, an agent and
    ``worker`` (each writes the clock to a marker file, prints a line and waits) and
    ``web`` (``python -m http.server`` on a free port): initd with ``web`` and ``worker`` in
    its ``--config`` file (``worker`` after ``web``, ``web`` ready once its port answers)
    against ``supervisord -n`` with the same three as ``[program:x]`` sections. The time
    from the launch to the agent's and the worker's start (their own clocks), and to "all
    up" (the worker started and web's port answering, polled from here); the CPU
    (``/proc``'s ticks) and RSS of the tool's own processes when the worker's marker
    appears and when all are up.
    supervisord has no dependencies: ``priority`` orders the starts, none waits for web
    to be ready, so its worker starts before web answers; initd's after web is ready.
    The figures say so: compare "all up" for the same end state.
35. the stop: SIGTERM to PID 1 of each, idle (all up, then 0.3 s) until PID 1 is gone
    (its namespace's every process with it), initd against supervisord.

The tool's own processes: supervisord is one; initd is PID 1, the supervisor and one log
writer per service (``initd svlog``), reported apart and together.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

PY = sys.executable
BIN = Path(PY).parent
INITD = str(BIN / "initd")  # the console scripts, as users run them
SUPERVISORD = str(BIN / "supervisord")
UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
TICK = os.sysconf("SC_CLK_TCK")
TOOLS = ("initd", "supervisord")


def stamped(tmp: Path, name: str) -> list[str]:
    """A program that writes the clock to ``tmp/name.started`` (whole, by a rename), prints
    a line and waits."""
    marker = tmp / f"{name}.started"
    return ["sh", "-c", f"date +%s.%N > {marker}.new && mv {marker}.new {marker}; "
                        f"echo {name} up; exec sleep 100000"]


def programs(tmp: Path, port: int) -> dict[str, list[str]]:
    """The three programs, the same for both tools."""
    return {"agent": stamped(tmp, "agent"),
            "web": [PY, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
            "worker": stamped(tmp, "worker")}


def initd_case(tmp: Path, port: int) -> list[str]:
    """initd's config file (root's, writable by root alone, as initd requires), its argv."""
    run = programs(tmp, port)
    config = tmp / "initd.yaml"
    config.write_text(  # (a JSON list is a YAML flow sequence)
        f"services_log_dir: {tmp / 'logs'}\n"
        "services:\n"
        f"  web:\n    command: {json.dumps(run['web'])}\n    user: root\n"
        f"    ready: {{port: {port}}}\n"
        f"  worker:\n    command: {json.dumps(run['worker'])}\n    user: root\n"
        "    after: [web]\n")
    config.chmod(0o644)
    return [INITD, "--no-service", "--config", str(config), "--", *run["agent"]]


def supervisord_case(tmp: Path, port: int) -> list[str]:
    """supervisord's config: the same programs, ``priority`` for the order (it has no
    dependencies and waits for no readiness), logs in ``tmp`` (``%%``: its format's ``%``)."""
    (tmp / "logs").mkdir()
    sections = [f"[supervisord]\nnodaemon=true\nuser=root\nlogfile={tmp / 'supervisord.log'}\n"
                f"pidfile={tmp / 'supervisord.pid'}\nchildlogdir={tmp / 'logs'}\n"]
    for priority, (name, argv) in enumerate(programs(tmp, port).items(), 1):
        sections.append(f"[program:{name}]\ncommand={shlex.join(argv).replace('%', '%%')}\n"
                        f"priority={priority}\n")
    config = tmp / "supervisord.conf"
    config.write_text("\n".join(sections))
    return [SUPERVISORD, "-n", "-c", str(config)]


def own(pid1: int) -> dict[str, list[int]]:
    """The tool's own processes: PID 1, its supervisor and its log writers (initd)."""
    found: dict[str, list[int]] = {"pid1": [pid1], "supervisor": [], "logs": []}
    for child in psutil.Process(pid1).children(recursive=True):
        try:
            argv = child.cmdline()
        except psutil.NoSuchProcess:
            continue
        if "svlog" in argv:
            found["logs"].append(child.pid)
        elif INITD in argv[:2]:
            found["supervisor"].append(child.pid)
    return found


def cpu_rss(pids: list[int]) -> tuple[float, float]:
    """CPU seconds (user + system, /proc's ticks) and RSS in MiB of ``pids``, summed."""
    cpu = rss = 0.0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu += (int(fields[11]) + int(fields[12])) / TICK
        rss += int(fields[21]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    return cpu, rss


def sample(pid1: int) -> dict[str, tuple[float, float]]:
    groups = own(pid1)
    parts = {name: cpu_rss(pids) for name, pids in groups.items()}
    parts["all"] = cpu_rss([pid for pids in groups.values() for pid in pids])
    return parts


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one_run(tool: str) -> dict[str, object]:
    """Launch ``tool`` as PID 1, watch until all are up, stop it: its figures."""
    with tempfile.TemporaryDirectory(prefix=f"initd-bench-{tool}-") as where:
        tmp, port = Path(where), free_port()
        argv = (initd_case if tool == "initd" else supervisord_case)(tmp, port)
        marker, err = tmp / "worker.started", open(tmp / "stderr", "wb")  # noqa: SIM115
        launched = time.time()
        proc = subprocess.Popen([*UNSHARE, *argv], stdout=subprocess.DEVNULL, stderr=err)
        try:
            pid1, at = watch(proc, marker, port, launched)
            worker = float(marker.read_text()) - launched
            agent = float((tmp / "agent.started").read_text()) - launched
            up = max(worker, at["web"])
            time.sleep(0.3)  # idle, as a container is before it is stopped
            started = time.perf_counter()
            os.kill(pid1, signal.SIGTERM)
            proc.wait(60)
            stop = time.perf_counter() - started
        except BaseException:
            proc.kill()
            proc.wait()
            err.close()
            print((tmp / "stderr").read_text(errors="replace")[-2000:], file=sys.stderr)
            raise
        err.close()
        return {"agent": agent, "worker": worker, "web": at["web"], "up": up, "stop": stop,
                "at_worker": at["worker"], "at_up": at["up"]}


def watch(proc: subprocess.Popen[bytes], marker: Path, port: int, launched: float
          ) -> tuple[int, dict]:
    """Poll every 2 ms until the worker's marker is there and web answers: PID 1, when web
    first answered (seconds after the launch), the tool's processes at each point."""
    at: dict = {}
    deadline, pid1 = time.monotonic() + 60, 0
    agent = marker.parent / "agent.started"
    while "worker" not in at or "web" not in at or not agent.exists():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError(f"not all up within 60 s (seen: {sorted(at)})")
        if not pid1:
            kids = psutil.Process(proc.pid).children()
            pid1 = kids[0].pid if kids else 0
        if "worker" not in at and marker.exists():
            at["worker"] = sample(pid1)
        if "web" not in at and answers(port):
            at["web"] = time.time() - launched
        time.sleep(0.002)
    at["up"] = sample(pid1)
    return pid1, at


def med(runs: list[dict], *keys: str | int) -> float:
    def get(run: dict) -> float:
        value = run[keys[0]]
        for key in keys[1:]:
            value = value[key]
        return float(value)

    return statistics.median(get(run) for run in runs)


def line(label: str, a: float, b: float, unit: str, scale: float = 1000) -> str:
    fmt = ".0f" if unit == "ms" else ".1f" if unit == "MiB" else ".3f"
    ratio = f"{a / b:.2f}x" if b > 0 else "n/a"
    return (f"services  {label}: initd {a * scale:{fmt}} {unit} | supervisord "
            f"{b * scale:{fmt}} {unit} | initd/supervisord {ratio}")


def resources(i: list[dict], s: list[dict], point: str, label: str) -> None:
    """CPU and RSS of each tool's processes at ``point``, initd's parts beside."""
    for index, what, unit, scale in ((0, "CPU", "s", 1.0), (1, "RSS", "MiB", 1.0)):
        mine = {part: med(i, point, part, index) for part in ("pid1", "supervisor", "logs")}
        print(line(f"{what} of the tool's processes {label}", med(i, point, "all", index),
                   med(s, point, "all", index), unit, scale))
        core = mine["pid1"] + mine["supervisor"]
        print(f"services    initd's: PID 1 {mine['pid1']:.3g} + supervisor "
              f"{mine['supervisor']:.3g} + 2 log writers {mine['logs']:.3g} {unit}; PID 1 + "
              f"supervisor alone / supervisord {core / med(s, point, 'all', index):.2f}x")


def report(runs: dict[str, list[dict]]) -> None:
    i, s = runs["initd"], runs["supervisord"]
    print(line("start to the agent's start (its own clock)", med(i, "agent"),
               med(s, "agent"), "ms"))
    print(line("start to the worker's start (its own clock)", med(i, "worker"),
               med(s, "worker"), "ms"))
    gap = {tool: statistics.median(run["worker"] - run["agent"] for run in runs[tool])
           for tool in TOOLS}
    print(f"services    the agent's start to the worker's: initd {gap['initd'] * 1000:.0f} ms "
          f"(web's readiness between) | supervisord {gap['supervisord'] * 1000:.0f} ms "
          "(all three in one pass of its loop, after the loop's first 1 s poll)")
    early = [run["web"] - run["worker"] for run in s]
    print(f"services    web's port first answered: initd {med(i, 'web') * 1000:.0f} ms | "
          f"supervisord {med(s, 'web') * 1000:.0f} ms. supervisord does not wait for web: its"
          f" worker started {statistics.median(early) * 1000:.0f} ms before web answered "
          f"(before it in {sum(e > 0 for e in early)} of {len(s)} runs); initd's "
          f"{med(i, 'worker') * 1000 - med(i, 'web') * 1000:+.0f} ms after (web ready first)")
    print(line("start to all up (the worker started, web answering)", med(i, "up"),
               med(s, "up"), "ms"))
    resources(i, s, "at_worker", "when the worker's marker appears")
    resources(i, s, "at_up", "when all are up")
    print(line("stop: SIGTERM to PID 1, idle, until it is gone", med(i, "stop"),
               med(s, "stop"), "ms"))


def main(runs: int = 10) -> None:
    if os.geteuid() != 0 or not os.path.exists(SUPERVISORD):
        print("services  not measured (needs root, unshare and supervisord: "
              "pip install -e '.[dev]')")
        return
    load = os.getloadavg()
    print(f"services  initd with 2 services vs supervisord with the same 3 programs, PID 1 "
          f"of a PID namespace, medians of {runs}, interleaved (load {load[0]:.2f})")
    found: dict[str, list[dict]] = {tool: [] for tool in TOOLS}
    for n in range(runs):  # interleaved, each first in turn: the machine's moods on both
        for tool in TOOLS if n % 2 == 0 else TOOLS[::-1]:
            found[tool].append(one_run(tool))
    report(found)
    print(f"services  load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    import compileall
    import shutil

    from run import own_home  # bench/run.py: a HOME of the run's own

    package = Path(__file__).resolve().parent.parent / "initd"
    before = set(package.rglob("__pycache__"))
    compileall.compile_dir(str(package), quiet=1)  # as run.py does: an installed wheel's start
    try:
        with own_home():
            main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
    finally:  # (only the caches made here)
        for cache in set(package.rglob("__pycache__")) - before:
            shutil.rmtree(cache, ignore_errors=True)
