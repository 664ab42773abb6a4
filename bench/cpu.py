"""What a sandbox start costs, in CPU and in time to the agent, quiet and with every core
busy (``make bench`` runs it; ``python bench/cpu.py`` alone):

29. CPU seconds of ``initd -- true`` (every process it waited for, PID 1's supervisor and
    ``true`` included) against ``python3 -c pass`` (goal <= 2.5x) and ``tini -- true``;
    and of a boot with a workspace (the hook service started, then stopped by the agent's
    end) against the same
30. time from the start to the agent's exec (its first act is to read the clock), tini,
    initd tini-style and initd with a workspace, quiet and with a CPU burner per core
    (goals: quiet <= +25 ms against tini, busy <= +60 ms); and with a workspace that has a
    guard (a Claude Code settings file): the guard snapshot's reader, which the agent
    waits for (invariant 15), against the same workspace without one
31. where the CPU goes: the supervisor's imports (``-X importtime``), largest first
"""

from __future__ import annotations

import compileall
import contextlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable
INITD = str(Path(PY).parent / "initd")  # the console script, as users run it
TINI = shutil.which("tini")
STAMP = ["date", "+%s.%N"]  # the agent: the wall clock, the moment it runs


def cpu_and_wall(cases: dict[str, list[str]], runs: int, cwd: str
                 ) -> dict[str, tuple[float, float]]:
    """Median CPU (user + system, of every process waited for) and wall time in
    milliseconds of each command, the runs interleaved."""
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    wall: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, argv in cases.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=cwd)
            wall[name].append((time.perf_counter() - start) * 1000)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append((after.ru_utime - before.ru_utime
                              + after.ru_stime - before.ru_stime) * 1000)
    return {name: (statistics.median(cpu[name]), statistics.median(wall[name]))
            for name in cases}


def to_agent(cases: dict[str, list[str]], runs: int, cwd: str) -> dict[str, float]:
    """Median milliseconds from the start of each command to its agent's first act."""
    found: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, argv in cases.items():
            start = time.time()
            out = subprocess.run([*argv, *STAMP], check=True, capture_output=True,
                                 text=True, cwd=cwd)
            found[name].append((float(out.stdout.strip()) - start) * 1000)
    return {name: statistics.median(samples) for name, samples in found.items()}


@contextlib.contextmanager
def burners() -> Iterator[None]:
    """A busy loop per core, as on a node starting sandboxes by the hundred."""
    procs = [subprocess.Popen([PY, "-c", "while True: pass"])
             for _ in range(os.cpu_count() or 1)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def supervisor_imports(cwd: str, top: int = 12) -> list[tuple[str, float]]:
    """The largest cumulative import times of one ``initd -- true`` (PID 1's and the
    supervisor's, as ``-X importtime`` reports them), in milliseconds."""
    out = subprocess.run([PY, "-X", "importtime", INITD, "--", "true"], capture_output=True,
                         text=True, cwd=cwd, check=True)
    rows = []
    for line in out.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cumulative, name = line.split("|")
            rows.append((name.rstrip(), int(cumulative) / 1000))
    return sorted(rows, key=lambda row: -row[1])[:top]


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "n/a"


def run(runs: int = 30) -> None:
    # initd's own bytecode, written once: under PYTHONDONTWRITEBYTECODE every start would
    # compile each module it imports again, and that is not what a start costs
    compileall.compile_dir(str(HERE.parent / "initd"), quiet=1)
    with tempfile.TemporaryDirectory(prefix="initd-bench-cpu-") as tmp:
        cwd = Path(tmp, "cwd")  # (an empty directory: python -c searches its cwd)
        cwd.mkdir()
        ws = Path(tmp, "ws")
        ws.mkdir()
        workspace = [INITD, "--workspace", str(ws), "--socket", f"{tmp}/s.sock",
                     "--hooks-dir", f"{tmp}/none", "--"]
        gws = Path(tmp, "gws")  # a workspace with a guard: the snapshot is read before CMD
        (gws / ".claude").mkdir(parents=True)
        (gws / ".claude" / "settings.json").write_text(
            '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": '
            '[{"type": "command", "command": "exit 0"}]}]}}')
        guarded = [INITD, "--workspace", str(gws), "--socket", f"{tmp}/g.sock",
                   "--hooks-dir", f"{tmp}/none", "--"]
        cases = {"python": [PY, "-c", "pass"], "initd": [INITD, "--", "true"],
                 "workspace": [*workspace, "true"], "guards": [*guarded, "true"],
                 "floor": [PY, str(HERE / "floor.py"), "--", "true"],
                 "lean": [PY, str(HERE / "floor_lean.py"), "--", "true"],
                 "signal": [PY, str(HERE / "floor_lean.py"), "--signal", "--", "true"],
                 "public": [PY, str(HERE / "floor_lean.py"), "--public", "--", "true"]}
        if TINI:
            cases["tini"] = [TINI, "-s", "--", "true"]
        starts = {"initd": [INITD, "--"], "workspace": workspace, "guards": guarded}
        if TINI:
            starts["tini"] = [TINI, "-s", "--"]
        for label, busy in (("quiet", contextlib.nullcontext()), ("busy", burners())):
            with busy:
                got = cpu_and_wall(cases, runs, str(cwd))
                agent = to_agent(starts, runs, str(cwd))
            py, initd, wsp = got["python"], got["initd"], got["workspace"]
            print(f"cpu       {label}: initd -- true {initd[0]:.1f} ms CPU ({initd[1]:.1f} ms "
                  f"wall) | python3 -c pass {py[0]:.1f} ms ({py[1]:.1f} ms wall): CPU "
                  f"{ratio(initd[0], py[0])}, wall {ratio(initd[1], py[1])} (goals <= 1.5x) "
                  f"| with a workspace (the hook service) {wsp[0]:.1f} ms"
                  + (f" | tini {got['tini'][0]:.1f} ms" if TINI else ""))
            print(f"          floors: fork + argparse + subprocess (floor.py) "
                  f"{got['floor'][0]:.1f} ms = {ratio(got['floor'][0], py[0])}; fork + a "
                  f"hand-read command line + os.fork/execvp (floor_lean.py) "
                  f"{got['lean'][0]:.1f} ms = {ratio(got['lean'][0], py[0])}; the same "
                  f"with signal imported (--signal: any Python PID 1's) "
                  f"{got['signal'][0]:.1f} ms = {ratio(got['signal'][0], py[0])}; with "
                  f"signal, typing and subprocess.Popen (--public: initd's modules of the "
                  f"standard library) {got['public'][0]:.1f} ms = "
                  f"{ratio(got['public'][0], py[0])}: initd {ratio(initd[0], got['public'][0])}"
                  f" of that floor")
            line = (f"to agent  {label}: initd {agent['initd']:.1f} ms, with a workspace "
                    f"{agent['workspace']:.1f} ms")
            if TINI:
                goal = 25 if label == "quiet" else 60
                line += (f" | tini {agent['tini']:.1f} ms: +{agent['initd'] - agent['tini']:.1f}"
                         f" / +{agent['workspace'] - agent['tini']:.1f} ms (goal <= +{goal})")
            print(line)
            more = agent["guards"] - agent["workspace"]
            print(f"guards    {label}: to the agent with a guard {agent['guards']:.1f} ms, "
                  f"without {agent['workspace']:.1f} ms: +{more:.1f} ms "
                  f"({ratio(agent['guards'], agent['workspace'])}); CPU "
                  f"{got['guards'][0]:.1f} ms against {wsp[0]:.1f} ms "
                  f"({ratio(got['guards'][0], wsp[0])}): the snapshot's reader")
        rows = supervisor_imports(str(cwd))
        print("imports   " + ", ".join(f"{name.strip()} {ms:.1f}" for name, ms in rows)
              + " (ms, cumulative, one run)")


if __name__ == "__main__":
    from run import own_home  # bench/run.py: a HOME of the run's own

    with own_home():  # (setdefault kept the real one: 241 sessions in /root/.discobot)
        run()
