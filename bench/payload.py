"""A large event's cost in the hook service's memory (part of ``make bench``):

33. a 16 MiB Write event (``POST /v1/events/pre_tool``, the whole file in
    ``tool_input.content``) through a hook service with two guards that read it on stdin
    (a Claude Code PreToolUse hook, and a nyzhi ``pre_tool`` hook, whose format also
    makes the payload's fields variables): the service's peak RSS (``VmHWM``) against
    the payload's size, and against the same service's RSS idle, once a small event has
    loaded what an event needs, in the same run. Goal: the peak above idle <= 2x the
    payload. Each case starts a service of its own (the peak only grows).
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

SIZE = 16 * 2**20  # the payload: the request's whole body
# What each guard does with the event: reads all of its stdin and counts it; the answer
# says how much each read (its stdout becomes the result's).
COUNT = "wc -c"
CLAUDE = {"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [
    {"type": "command", "command": COUNT}]}]}}
NYZHI = f'[[agent.hooks]]\nevent = "pre_tool"\ncommand = "{COUNT}"\n'


def source_text(size: int) -> str:
    """A source file's worth of text: lines of code with quotes and a tab, as a Write of
    a real file carries them (each escaped in the JSON)."""
    lines, total, i = [], 0, 0
    while total < size:
        line = f'\tvalue_{i} = compute("item {i}", table[{i % 97}])  # step {i}\n'
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines)


def body(size: int) -> bytes:
    """A Write event of ``size`` bytes in all: the content made to fit (its escapes make
    the JSON longer than the text), then spaces, a few at most."""
    def made(content: str) -> bytes:
        return json.dumps({"tool_name": "Write", "tool_input": {
            "file_path": "src/generated.py", "content": content}}).encode()
    text = source_text(size)
    low, high = 0, size  # the longest cut of the text that fits
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if len(made(text[:mid])) <= size else (low, mid - 1)
    return made(text[:low]).ljust(size, b" ")


def post(sock: str, data: bytes) -> tuple[int, dict[str, object]]:
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(120)
        conn.connect(sock)
        conn.sendall(b"POST /v1/events/pre_tool HTTP/1.0\r\nContent-Type: application/json"
                     b"\r\nContent-Length: " + str(len(data)).encode() + b"\r\n\r\n" + data)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, payload = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), json.loads(payload)


def kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise LookupError(key)


def measure(tmp: Path, data: bytes) -> tuple[float, float, list[str]]:
    """(idle RSS, peak RSS, what each guard read) in MiB, of a fresh service."""
    repo = tmp / "ws"
    (repo / ".claude").mkdir(parents=True, exist_ok=True)
    (repo / ".nyzhi").mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps(CLAUDE))
    (repo / ".nyzhi" / "config.toml").write_text(NYZHI)
    sock = str(tmp / "initd.sock")
    proc = subprocess.Popen([sys.executable, "-m", "initd", "service", "--socket", sock,
                             "--workspace", str(repo), "--session-id", "bench-payload",
                             "--hooks-dir", str(repo / "none")], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("ready")
        code, _ = post(sock, body(4096))  # what an event needs, loaded
        assert code == 200
        idle = kib(proc.pid, "VmRSS") / 1024
        code, outcome = post(sock, data)
        peak = kib(proc.pid, "VmHWM") / 1024
        assert code == 200, outcome
        results = outcome["results"]
        assert isinstance(results, list)
        read = [str(r.get("stdout", "")).strip() or str(r.get("error")) for r in results]
        return idle, peak, read
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


def main() -> None:
    data = body(SIZE)
    size = len(data) / 2**20
    with tempfile.TemporaryDirectory() as tmp:
        idle, peak, read = measure(Path(tmp), data)
    cost = peak - idle
    ok = cost <= 2 * size
    print(f"payload   a {size:.0f} MiB Write event, two guards reading it on stdin (each "
          f"read {' and '.join(read)} bytes): the service's peak RSS {peak:.1f} MiB, "
          f"idle {idle:.1f} MiB: {cost:.1f} MiB above idle = {cost / size:.2f}x the "
          f"payload (goal <= 2x){'' if ok else '  NOT MET'}; the peak is "
          f"{peak / size:.2f}x the payload")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from run import own_home  # bench/run.py: a HOME of the run's own

    with own_home():
        main()
