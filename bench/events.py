"""Event benchmarks (part of ``make bench``):

10. ``initd emit``'s round trip (the POST /v1/events the verb makes, over the socket) with
    one trivial shell hook, vs spawning ``sh -c true`` directly (goal <= 3x);
11. events per second over the socket with no hooks (goal >= 200).
"""

from __future__ import annotations

import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from initd.commands import client


def median_ms(run, times: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def service(repo: Path, sock: str, sid: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "initd", "service", "--socket", sock,
                             "--workspace", str(repo), "--session-id", sid,
                             "--hooks-dir", str(repo / "none")], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline().startswith("ready")
    return proc


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "ws"
        (repo / ".nyzhi").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        (repo / ".nyzhi" / "config.toml").write_text(
            '[[agent.hooks]]\nevent = "after_turn"\ncommand = "true"\n')
        sock = str(Path(tmp) / "initd.sock")
        proc = service(repo, sock, "bench-events")
        try:
            def emit() -> None:
                code, outcome = client.call("POST", "/v1/events/after_turn", {}, sock=sock)
                assert code == 200 and outcome["results"][0]["status"] == "ok"
            for _ in range(20):
                emit()  # warm: the configs read once, the caches filled
            ours, ours99 = median_ms(emit, 200)
            bare, _ = median_ms(lambda: subprocess.run(["sh", "-c", "true"], check=True), 200)
            # the same job done directly: the event on stdin, both streams read back
            same, _ = median_ms(lambda: subprocess.run(["sh", "-c", "true"], check=True,
                                                       input=b'{"event": "after_turn"}',
                                                       capture_output=True), 200)
            print(f"events    emit with one shell hook, 200 runs: p50 {ours:.2f} ms, p99 "
                  f"{ours99:.2f} ms | spawning sh -c true directly, fed the event and its "
                  f"output read: p50 {same:.2f} ms, ratio {ours / same:.2f}x (goal <= 3x) | "
                  f"bare, output not read: {bare:.2f} ms, {ours / bare:.2f}x")
            def keyed() -> None:  # as `initd emit` sends it: the journal written, fsynced
                code, outcome = client.call("POST", "/v1/events/after_turn", {}, sock=sock,
                                            key=client.new_key())
                assert code == 200 and outcome["results"][0]["status"] == "ok"
            journaled, journaled99 = median_ms(keyed, 200)
            print(f"events    the same with an Idempotency-Key (as initd emit sends it: "
                  f"the request's journal: 4 lines, the 'fired' one fsynced): p50 "
                  f"{journaled:.2f} ms, p99 {journaled99:.2f} ms, ratio "
                  f"{journaled / same:.2f}x (goal <= 4x)")
            n, started = 1000, time.perf_counter()
            for _ in range(n):
                assert client.call("POST", "/v1/events/pre_tool", {}, sock=sock)[0] == 200
            rate = n / (time.perf_counter() - started)
            print(f"events    {n} events with no hooks over the socket, one at a time: "
                  f"{rate:.0f} events/s (goal >= 200)")
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)


if __name__ == "__main__":
    from run import own_home  # bench/run.py: a HOME of the run's own

    with own_home():
        main()
