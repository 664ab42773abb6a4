"""The bundle's benchmarks (part of ``make bench``, when ``make image`` has built it):

23. its size, uncompressed and compressed, against the venv form (a venv of Debian's
    Python with the same wheels) and against what installing Python costs an image
    without it (initd's base, which is the bare base plus python3, python3-venv and
    procps, against that bare base);
24. ``initd -- true`` from the bundle against the same from that venv (goal <= 1.0x);
25. ``podman run`` to the agent ready (its port answers) in a Node image with the bundle
    (COPY --from, as the README shows), initd against tini as the entrypoint of the same
    image (goal <= +25 ms at the median).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

import startstop  # bench/startstop.py: podman, free_port, start_to_ready, stop_ms

ROOT = Path(__file__).resolve().parent.parent
BUILT = ROOT / "build" / "bundle"
HOME = BUILT / "rootfs" / "opt" / "initd"
WHEELS = ROOT / "build" / "wheels"
NODE_BASE = "localhost/initd-base-node:bookworm"
NODE_IMAGE = "localhost/initd-bench-node:dev"
BASES = ("localhost/initd-base:bookworm", "localhost/initd-base-minimal:bookworm")
MIB = 2**20


def tree_bytes(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*"))


def gzipped_bytes(path: Path) -> int:
    """A gzip -9 tarball of ``path``, as the bundle's own tarball is made."""
    with tempfile.TemporaryFile() as f:
        with tarfile.open(fileobj=f, mode="w:gz", compresslevel=9) as tar:
            tar.add(path, arcname=path.name)
        return f.tell()


def venv_form(where: Path) -> Path:
    """A venv of Debian's Python with the same wheels (pip and setuptools removed, as
    neither is needed to run initd), byte-compiled as pip installs it."""
    venv = where / "venv"
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--quiet", "--disable-pip-version-check"]
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    subprocess.run([*pip, "install", "--no-index", "--find-links", str(WHEELS), "agent-initd"],
                   check=True)
    subprocess.run([*pip, "uninstall", "--yes", "setuptools", "pip"], check=True)
    return venv


def relocated(where: Path) -> Path:
    """The bundle copied to ``where``, its entry's first line naming that place."""
    home = where / "initd"
    shutil.copytree(HOME, home, symlinks=True)
    entry = home / "initd"
    lines = entry.read_text().split("\n", 1)
    entry.write_text(f"#!{home}/bin/python3.11 -IS\n{lines[1]}")
    return home


def image_mb(image: str) -> float | None:
    out = startstop.podman("image", "inspect", image, "--format", "{{.Size}}")
    return int(out.stdout) / 1e6 if out.returncode == 0 else None


def sizes(venv: Path) -> None:
    bundle, packed = tree_bytes(HOME), gzipped_bytes(HOME)
    vbytes, vpacked = tree_bytes(venv), gzipped_bytes(venv)
    print(f"bundle    size {bundle / MIB:.1f} MiB, {packed / MIB:.1f} MiB gzipped | the venv "
          f"form {vbytes / MIB:.1f} MiB, {vpacked / MIB:.1f} MiB gzipped, plus the image's "
          "Python")
    python, bare = (image_mb(b) for b in BASES)
    if python and bare:
        print(f"          installing Python (python3, python3-venv, procps) into the bare "
              f"base: +{python - bare:.0f} MB | the bundle: +{bundle / 1e6:.0f} MB "
              f"({bundle / 1e6 / (python - bare):.2f}x)")


def boot(venv: Path, home: Path, runs: int = 60) -> None:
    with tempfile.TemporaryDirectory(prefix="initd-bench-ws-") as ws:
        args = ["--workspace", ws, "--socket", f"{ws}/initd.sock", "--", "true"]
        cases = {"venv": [str(venv / "bin" / "initd"), *args],
                 "bundle": [str(home / "initd"), *args]}
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(runs):  # interleaved: the machine's moods fall on both alike
            for name, argv in cases.items():
                start = time.perf_counter()
                subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ws)
                times[name].append(time.perf_counter() - start)
    a, b = (statistics.median(times[n]) * 1000 for n in ("bundle", "venv"))
    print(f"bundle    initd -- true from the bundle {a:.1f} ms | from the venv {b:.1f} ms | "
          f"{a / b:.2f}x (goal <= 1.0x){'' if a <= b else ' MISSED'}")


def node_image(where: Path) -> bool:
    """The Node base with the bundle as the README adds it, a Node agent API and the
    host's static tini (built on every run, from the bundle as it is now)."""
    if not os.path.exists("/usr/bin/tini-static"):
        return False
    shutil.copy("/usr/bin/tini-static", where / "tini")
    shutil.copy(ROOT / "tests" / "e2e" / "adoption" / "agent" / "server.js", where)
    (where / "Containerfile").write_text(
        f"FROM {NODE_BASE}\n"
        "COPY --from=localhost/initd-bundle:dev /opt/initd /opt/initd\n"
        "RUN useradd --create-home --uid 1000 agent && install -d -o agent /workspace\n"
        'ENTRYPOINT ["/opt/initd/initd", "--user", "agent", "--"]\n'
        "COPY tini /usr/bin/tini\nCOPY server.js /opt/agent/server.js\nWORKDIR /workspace\n")
    return startstop.podman("build", "--quiet", "--network=none", "-t", NODE_IMAGE,
                            str(where)).returncode == 0


def node_ready(runs: int = 9) -> None:
    with tempfile.TemporaryDirectory(prefix="initd-bench-node-") as where:
        if not node_image(Path(where)):
            print("bundle    no tini-static or no Node base: podman run in the Node image "
                  "not measured")
            return
    agent = ["node", "/opt/agent/server.js"]
    ready: dict[str, list[float]] = {"initd": [], "tini": []}
    try:
        for _ in range(runs):
            for case in ("tini", "initd"):
                port = startstop.free_port()
                common = ["--network=host", "-e", f"AGENT_PORT={port}"]
                args = {"initd": [*common, "-e", f"INITD_READY_PORT={port}", NODE_IMAGE,
                                  *agent],
                        "tini": [*common, "--user", "1000", "--entrypoint", "/usr/bin/tini",
                                 NODE_IMAGE, "--", *agent]}[case]
                took, name = startstop.start_to_ready(args, port)
                ready[case].append(took)
                startstop.stop_ms(name)
    finally:
        startstop.podman("rmi", "-f", NODE_IMAGE)
    a, b = statistics.median(ready["initd"]), statistics.median(ready["tini"])
    print(f"bundle    podman run to agent ready in the Node image, median of {runs}: initd "
          f"{a:.0f} ms | tini {b:.0f} ms | +{a - b:.0f} ms (goal <= +25 ms)"
          f"{'' if a - b <= 25 else ' MISSED'}")


def main() -> None:
    if not (HOME / "initd").exists() or not list(WHEELS.glob("*.whl")):
        print("bundle    no bundle (make bundle, or make image, builds it): not measured")
        return
    with tempfile.TemporaryDirectory(prefix="initd-bench-bundle-") as where:
        venv, home = venv_form(Path(where)), relocated(Path(where))
        sizes(venv)
        boot(venv, home)
    if shutil.which("podman") and not startstop.podman("image", "exists",
                                                       "localhost/initd-bundle:dev"
                                                       ).returncode:
        node_ready()


if __name__ == "__main__":
    from run import own_home  # bench/run.py: a HOME of the run's own

    with own_home():
        main()
