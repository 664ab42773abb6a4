"""Every agent's way in (part of ``make bench``):

32. ``initd emit --from AGENT``'s round trip, the process the agent's own hook config
    runs (the payload on its stdin, the answer in the agent's terms), with one guard (a
    Claude Code PreToolUse command hook that reads its stdin and allows), for each agent
    that calls initd, against spawning the same hook directly, fed the same payload and
    its output read: what putting the agent's hooks behind initd costs a tool call; and
    what emit --from imports (its agent's wire alone, events/wires/NAME.py) against
    importing every format's loader (events/dialects), which it did before.
"""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from initd.events.sources import AGENTS as WIRES

HOOK = "cat > /dev/null"
# each agent's shell tool call, as its hooks reference shows it
SAMPLES: dict[str, dict[str, Any]] = {
    "claude": {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w",
               "tool_name": "Bash", "tool_input": {"command": "ls"}},
    "codex": {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w",
              "turn_id": "t", "model": "m", "permission_mode": "default",
              "transcript_path": None, "tool_name": "Bash", "tool_use_id": "c",
              "tool_input": {"command": "ls"}},
    "gemini": {"hook_event_name": "BeforeTool", "session_id": "s", "cwd": "/w",
               "transcript_path": "/t", "timestamp": "2026-11-28T00:00:00Z",
               "tool_name": "run_shell_command", "tool_input": {"command": "ls"}},
    "cursor": {"hook_event_name": "beforeShellExecution", "conversation_id": "c",
               "generation_id": "g", "workspace_roots": ["/w"], "command": "ls",
               "cwd": "/w"},
    "vscode": {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w",
               "timestamp": "2026-11-28T00:00:00Z", "tool_name": "run_in_terminal",
               "tool_input": {"command": "ls"}},
}


def median_ms(run, times: int) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def imports(module: str) -> None:
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True)


def main(runs: int = 40) -> None:
    missing = sorted(set(WIRES) - set(SAMPLES))
    assert not missing, f"bench/agents.py: no sample payload for {missing}"
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        (ws / ".claude").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
        (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": HOOK}]}]}}))
        sock = str(Path(tmp) / "initd.sock")
        proc = subprocess.Popen([sys.executable, "-m", "initd", "service", "--socket", sock,
                                 "--workspace", str(ws), "--session-id", "bench-agents",
                                 "--hooks-dir", str(ws / "none")], stdout=subprocess.PIPE,
                                text=True)
        assert proc.stdout is not None and proc.stdout.readline().startswith("ready")
        try:
            for agent in WIRES:
                data = json.dumps(SAMPLES[agent]).encode()

                def through(agent: str = agent, data: bytes = data) -> None:
                    done = subprocess.run([sys.executable, "-m", "initd", "emit", "--from",
                                           agent, "--socket", sock], input=data,
                                          capture_output=True, check=False)
                    assert done.returncode == 0, done.stderr

                def direct(data: bytes = data) -> None:
                    subprocess.run(["sh", "-c", HOOK], input=data, capture_output=True,
                                   check=True)
                for _ in range(3):
                    through()  # warm
                ours, same = median_ms(through, runs), median_ms(direct, runs)
                print(f"agents    {agent}: initd emit --from {agent} with one guard, "
                      f"{runs} runs: p50 {ours:.1f} ms | the hook spawned directly: "
                      f"{same:.1f} ms: {ours / same:.1f}x")
                alone = median_ms(lambda a=agent: imports(f"initd.events.wires.{a}"), 10)
                every = median_ms(lambda: imports("initd.events.dialects"), 10)
                print(f"agents    {agent}: python importing its wire alone: p50 "
                      f"{alone:.1f} ms | every format's loader: {every:.1f} ms: "
                      f"{alone / every:.2f}x")
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import own_home  # bench/run.py: a HOME of the run's own

    with own_home():
        main()
