"""Container benchmarks (part of ``make bench``, when ``make image`` has built the images):

12. the images' sizes;
13. boot to ready: ``podman run`` of the demo image until initd says the agent is ready
    (its port answers), median of 5.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
import uuid

from initd.commands import client

IMAGES = ("localhost/initd:dev", "localhost/initd-demo:dev")


def podman(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, timeout=120)


def boot_to_ready() -> float:
    """Seconds from podman run to GET /v1/ready = 200 (the socket, bind-mounted out)."""
    run_dir = tempfile.mkdtemp(prefix="initd-bench-")
    name = f"initd-bench-{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    try:
        podman("run", "-d", "--name", name, "-v", f"{run_dir}:/run/initd", "-e",
               "INITD_READY_PORT=8080", IMAGES[1], "/opt/demo/agent-api.py")
        while True:
            try:
                if client.call("GET", "/v1/ready", sock=f"{run_dir}/initd.sock",
                               timeout=5)[0] == 200:
                    return time.monotonic() - started
            except Exception:
                pass
            if time.monotonic() - started > 60:
                raise RuntimeError("the container never got ready")
            time.sleep(0.01)
    finally:
        podman("rm", "-f", "-t", "0", name)
        shutil.rmtree(run_dir, ignore_errors=True)


def main() -> None:
    if shutil.which("podman") is None or podman("image", "exists", IMAGES[1]).returncode:
        print("container no images (make image builds them): not measured")
        return
    for image in IMAGES:
        size = podman("image", "inspect", image, "--format", "{{.Size}}").stdout.strip()
        print(f"container {image}: {int(size) / 1e6:.0f} MB")
    times = [boot_to_ready() for _ in range(5)]
    print(f"container podman run to agent ready (its port answers), 5 runs: median "
          f"{statistics.median(times) * 1000:.0f} ms (min {min(times) * 1000:.0f}, max "
          f"{max(times) * 1000:.0f})")


if __name__ == "__main__":
    from run import own_home  # bench/run.py: a HOME of the run's own

    with own_home():
        main()
