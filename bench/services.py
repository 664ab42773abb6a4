"""initd's services against supervisord (run as root: ``.venv/bin/python bench/services.py
[RUNS]``; ``make bench`` runs it); each figure beside supervisord's, measured in the same
run, the two interleaved (bench/README.md).

34. the start: PID 1 of a new PID namespace starting three programs, an agent (prints a
    line and waits), ``web`` (``python -m http.server`` on a free port) and ``worker``
    (writes the clock to a marker file, then waits): initd with ``web`` and ``worker`` in
    its ``--config`` file (``worker`` after ``web``, ``web`` ready once its port answers)
    against ``supervisord -n`` with the same three as ``[program:x]`` sections. The time
    from the launch to the worker's start (its own clock), and to "all up" (the worker
    started and web's port answering, polled from here); the CPU (``/proc``'s ticks) and
    RSS of the tool's own processes when the worker's marker appears and when all are up.
    supervisord has no dependencies: ``priority`` orders the starts, none waits for web
    to be ready, so its worker starts before web answers; initd's after web is ready.
    The figures say so: compare "all up" for the same end state.
35. the stop: SIGTERM to PID 1 of each, idle (all up, then 0.3 s) until PID 1 is gone
    (its namespace's every process with it), initd against supervisord.

The tool's own processes: supervisord is one; initd is PID 1, the supervisor and one log
writer per service (``initd svlog``), reported apart and together.
"""

from __future__ import annotations

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
AGENT = ["sh", "-c", "echo agent up; exec sleep 100000"]
TOOLS = ("initd", "supervisord")


def programs(tmp: Path, port: int) -> dict[str, list[str]]:
    """The three programs, the same for both tools."""
    marker = tmp / "worker.started"
    return {"agent": AGENT,
            "web": [PY, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
            "worker": ["sh", "-c", f"date +%s.%N > {marker}.new && mv {marker}.new {marker};"
                                   " exec sleep 100000"]}


def initd_case(tmp: Path, port: int) -> list[str]:
    """initd's config file (root's, writable by root alone, as initd requires), its argv."""
    run = programs(tmp, port)
    config = tmp / "initd.yaml"
    config.write_text(
        f"services_log_dir: {tmp / 'logs'}\n"
        "services:\n"
        f"  web:\n    command: {run['web']}\n    user: root\n    ready: {{port: {port}}}\n"
        f"  worker:\n    command: {run['worker']}\n    user: root\n    after: [web]\n"
        .replace("'", '"'))
    config.chmod(0o644)
    return [INITD, "--no-service", "--config", str(config), "--", *run["agent"]]


def supervisord_case(tmp: Path, port: int) -> list[str]:
    """supervisord's config: the same programs, ``priority`` for the order (it has no
    dependencies and waits for no readiness), logs in ``tmp``."""
    (tmp / "logs").mkdir()
    sections = [f"[supervisord]\nnodaemon=true\nuser=root\nlogfile={tmp / 'supervisord.log'}\n"
                f"pidfile={tmp / 'supervisord.pid'}\nchildlogdir={tmp / 'logs'}\n"]
    for priority, (name, argv) in enumerate(programs(tmp, port).items(), 1):
        sections.append(f"[program:{name}]\ncommand={shlex.join(argv)}\n"
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
        return {"worker": worker, "web": at["web"], "up": up, "stop": stop,
                "at_worker": at["worker"], "at_up": at["up"]}


def watch(proc: subprocess.Popen[bytes], marker: Path, port: int, launched: float
          ) -> tuple[int, dict]:
    """Poll every 2 ms until the worker's marker is there and web answers: PID 1, when web
    first answered (seconds after the launch), the tool's processes at each point."""
    at: dict = {}
    deadline, pid1 = time.monotonic() + 60, 0
    while "worker" not in at or "web" not in at:
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


def med(runs: list[dict], *keys: str) -> float:
    def get(run: dict) -> float:
        value = run[keys[0]]
        for key in keys[1:]:
            value = value[key]
        return float(value)

    return statistics.median(get(run) for run in runs)


def line(label: str, a: float, b: float, unit: str, scale: float = 1000) -> str:
    fmt = ".0f" if unit == "ms" else ".1f" if unit == "MiB" else ".3f"
    return (f"services  {label}: initd {a * scale:{fmt}} {unit} | supervisord "
            f"{b * scale:{fmt}} {unit} | initd/supervisord {a / b:.2f}x" if b else "n/a")
