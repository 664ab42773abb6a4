"""Hook-service benchmarks (part of ``make bench``):

7. evaluation overhead, hooks excluded (one file hook whose pattern matches nothing), on
   a generated 100k-file repository, vs ``git status --porcelain`` on the same tree
   (goal <= 1.3x), with 10, 100 and 1,000 dirty files;
8. a POST /v1/turn with nothing pending, over the socket: p50/p99 of 200;
9. the idle hook service's RSS (goal <= 30 MiB).
"""

from __future__ import annotations

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

from initd.commands import client, options
from initd.config import log, settings
from initd.hooks import context, discovery, filehooks

GIT_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env=GIT_ENV)


def big_repo(root: Path, files: int = 100_000) -> Path:
    repo = root / "big"
    for i in range(files):
        d = repo / f"d{i // 1000:03d}"
        if i % 1000 == 0:
            d.mkdir(parents=True)
        (d / f"f{i:06d}.txt").write_text(f"{i}\n")
    hooks = repo / ".discobot" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "none.sh").write_text("#!/bin/sh\n#---\n# type: file\n# pattern: '*.nomatch'\n"
                                   "#---\nexit 0\n")
    (hooks / "none.sh").chmod(0o755)
    git(repo, "init", "-q")
    git(repo, "-c", "user.email=b@b", "-c", "user.name=b", "add", "-A")
    git(repo, "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "big")
    return repo


def median_ms(run, times: int = 7) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def evaluation(repo: Path) -> None:
    sid = "bench-eval"
    flags = options.parse(["--workspace", str(repo), "--session-id", sid, "--hooks-dir",
                           str(repo / "none"), "--", "true"])
    ctx = context.make(settings.load(flags, {}), None, log.get(), sid)
    hooks = discovery.for_workspace(str(repo), str(repo / "none")).hooks
    touched = 0
    for dirty in (10, 100, 1000):
        for i in range(touched, dirty):
            (repo / f"d{i // 1000:03d}" / f"f{i:06d}.txt").write_text("changed\n")
        touched = dirty
        filehooks.evaluate(hooks, ctx)  # warm the caches as a running service has them
        ours = median_ms(lambda: filehooks.evaluate(hooks, ctx))
        status = median_ms(lambda: subprocess.run(["git", "-C", str(repo), "status",
                                                   "--porcelain"], capture_output=True,
                                                  env=GIT_ENV, check=True))
        print(f"evaluate  100k files, {dirty:>4} dirty: {ours:.0f} ms | git status "
              f"--porcelain {status:.0f} ms | ratio {ours / status:.2f}x (goal <= 1.3x)")
    shutil.rmtree(Path.home() / ".discobot" / sid, ignore_errors=True)


def api(root: Path) -> None:
    repo = root / "small"
    repo.mkdir()
    git(repo, "init", "-q")
    sock = str(root / "initd.sock")
    proc = subprocess.Popen([sys.executable, "-m", "initd", "service", "--socket", sock,
                             "--workspace", str(repo), "--session-id", "bench-api",
                             "--hooks-dir", str(repo / "none")], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline().startswith("ready")
    samples = []
    for _ in range(200):
        start = time.perf_counter()
        code, _ = client.call("POST", "/v1/turn", {"trigger": "user"}, sock=sock)
        samples.append((time.perf_counter() - start) * 1000)
        assert code == 200
    samples.sort()
    time.sleep(0.5)
    rss = psutil.Process(proc.pid).memory_info().rss / 2**20
    proc.send_signal(signal.SIGTERM)
    proc.wait(10)
    shutil.rmtree(Path.home() / ".discobot" / "bench-api", ignore_errors=True)
    print(f"api       POST /v1/turn, nothing pending, 200 calls: p50 "
          f"{statistics.median(samples):.1f} ms, p99 {samples[197]:.1f} ms")
    print(f"memory    hook service idle after them: RSS {rss:.1f} MiB (goal <= 30)")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.monotonic()
        repo = big_repo(Path(tmp))
        print(f"(generated a 100k-file repository in {time.monotonic() - started:.0f} s)")
        evaluation(repo)
        api(Path(tmp))


if __name__ == "__main__":
    from run import own_home  # bench/run.py: a HOME of the run's own

    with own_home():
        main()
