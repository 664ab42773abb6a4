"""What a devcontainer.json command's output costs root's supervisor (run as root:
``.venv/bin/python bench/lifecycle_output.py [RUNS]``); each figure beside a baseline
measured in the same run, on the same machine (bench/README.md).

A. A waited stage that prints ``seq 1 3000000`` (21 MB, 3 million lines): the boot of
   ``initd -- true`` with it, against the same boot whose command sends the same output
   to /dev/null itself (what is left is what initd's handling of the output costs), and
   bare ``seq`` into /dev/null.
B. A chatty daemon a postStartCommand leaves (``yes &``, writing to the command's output
   forever) while the agent runs for WINDOW seconds: root's supervisor's CPU against the
   daemon's own, and the bytes the daemon wrote against ``yes | cat > /dev/null`` over
   the same window (a pipe drained as fast as it can be).

initd runs as PID 1 of a new PID namespace, watched from outside through /proc.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

PY = sys.executable
UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
TICK = os.sysconf("SC_CLK_TCK")
WINDOW = 3.0  # seconds the daemon is watched
SEQ = "seq 1 3000000"


def initd(ws: Path, state: Path, *cmd: str) -> list[str]:
    return [*UNSHARE, PY, "-m", "initd", "--workspace", str(ws), "--state-dir", str(state),
            "--hooks-dir", str(ws / "none"), "--session-id", "bench", "--no-service",
            "--", *cmd]


def devcontainer(ws: Path, body: dict[str, object]) -> None:
    (ws / ".devcontainer").mkdir(exist_ok=True)
    (ws / ".devcontainer" / "devcontainer.json").write_text(json.dumps(body))


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def waited_stage(runs: int) -> None:
    times: dict[str, list[float]] = {"output": [], "silent": [], "bare": []}
    with tempfile.TemporaryDirectory() as tmp:
        loud, quiet, state = Path(tmp, "loud"), Path(tmp, "quiet"), Path(tmp, "state")
        for ws, command in ((loud, SEQ), (quiet, f"{SEQ} > /dev/null")):
            ws.mkdir()
            devcontainer(ws, {"postStartCommand": command, "waitFor": "postStartCommand"})
        state.mkdir()
        for _ in range(runs):  # interleaved: the machine's moods fall on each alike
            times["output"].append(timed(initd(loud, state, "true")))
            times["silent"].append(timed(initd(quiet, state, "true")))
            times["bare"].append(timed(["sh", "-c", f"{SEQ} > /dev/null"]))
    t = {name: statistics.median(samples) for name, samples in times.items()}
    print(f"A. waited stage printing `{SEQ}`: initd boot {t['output']:.2f} s | the same "
          f"boot, output to /dev/null by the command {t['silent']:.2f} s: ratio "
          f"{t['output'] / t['silent']:.2f}x, the output's handling "
          f"{t['output'] - t['silent']:.2f} s | bare seq > /dev/null {t['bare']:.3f} s",
          flush=True)


def cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def written(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise RuntimeError(f"no wchar for {pid}")


def find(parent: psutil.Process, name: str, timeout: float = 30) -> psutil.Process:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in parent.children(recursive=True):
            try:
                if child.name() == name:
                    return child
            except psutil.Error:
                continue
        time.sleep(0.01)
    raise RuntimeError(f"no {name} under {parent.pid}")


def watch(writer: int, supervisor: int | None) -> tuple[float, float, int]:
    """Over WINDOW: the writer's CPU seconds, the supervisor's, the bytes written."""
    before = (cpu(writer), cpu(supervisor) if supervisor else 0.0, written(writer))
    time.sleep(WINDOW)
    after = (cpu(writer), cpu(supervisor) if supervisor else 0.0, written(writer))
    return after[0] - before[0], after[1] - before[1], after[2] - before[2]


def chatty_daemon() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws, state = Path(tmp, "ws"), Path(tmp, "state")
        ws.mkdir()
        state.mkdir()
        devcontainer(ws, {"postStartCommand": "yes &", "waitFor": "postStartCommand"})
        proc = subprocess.Popen(initd(ws, state, "sleep", "600"), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            top = psutil.Process(proc.pid)
            find(top, "sleep")  # the agent runs: the stage is done, the daemon left
            yes = find(top, "yes")
            init = top.children()[0]
            supervisor = init.children()[0].pid
            time.sleep(1.0)  # past the log's cap: what root pays from then on
            yes_cpu, root_cpu, size = watch(yes.pid, supervisor)
            init.terminate()  # (unshare itself ignores TERM: initd, its PID 1, stops)
            proc.wait(60)
        finally:
            proc.kill()
            proc.wait()
    bare = subprocess.Popen(["sh", "-c", "yes | cat > /dev/null"], start_new_session=True)
    try:
        base = find(psutil.Process(bare.pid), "yes")
        base_cpu, _, base_size = watch(base.pid, None)
    finally:
        os.killpg(bare.pid, signal.SIGKILL)  # the pipeline whole: never a `yes` left behind
        bare.wait()
    print(f"B. a daemon writing `yes` forever, over {WINDOW:g} s: root's supervisor "
          f"{root_cpu:.2f} CPU s against the daemon's {yes_cpu:.2f}: "
          f"{root_cpu / max(yes_cpu, 1 / TICK):.1%} | daemon wrote "
          f"{size / WINDOW / 2**20:.1f} MiB/s against `yes | cat > /dev/null` "
          f"{base_size / WINDOW / 2**20:.1f} MiB/s ({base_cpu:.2f} CPU s): "
          f"{size / max(base_size, 1):.2f}x")


def main(runs: int = 5) -> None:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("lifecycle output: not measured (needs root and unshare)")
        return
    home = tempfile.mkdtemp(prefix="initd-bench-home-")
    os.environ["HOME"] = home  # initd's state for what runs here never lands in a real home
    try:
        waited_stage(runs)
        chatty_daemon()
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
