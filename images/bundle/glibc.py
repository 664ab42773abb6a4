"""The oldest glibc the bundle runs on, and what build.py does to Debian 12's libraries
(built against 2.36) so that every file of the bundle loads on it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import elf  # images/bundle/elf.py

# The oldest glibc the bundle runs on: Ubuntu 22.04's. Debian 12's is 2.36, and one
# library built there calls one 2.36 function, for which an older one does the same:
# libexpat's hash salt, arc4random_buf(buf, 8), is getentropy(buf, 8) (2.25; the same
# getrandom(2) underneath; at most 256 bytes, and expat asks for 8; the int it returns
# is ignored like arc4random_buf's void).
OLDEST_GLIBC = (2, 35)
NEWER_CALLS = {"libexpat.so.1": {"arc4random_buf": "getentropy"}}
# libstdc++ (google-re2's C++ runtime, with libgcc_s) calls arc4random (2.36) only for
# std::random_device("arc4random"), which nothing in the bundle asks for (re2 has no
# random device) and no older function can stand in for (uint32_t of a CSPRNG): the
# reference is made weak and unversioned, so a 2.35 glibc loads it (a call would fault
# there, never return weak numbers) and a newer one binds glibc's own.
WEAK_CALLS = {"libstdc++.so.6": {"arc4random"}}


def older(lib: Path, patchelf: str, elves: list[Path]) -> None:
    """Call the older function in each library of NEWER_CALLS, make the calls of
    WEAK_CALLS weak, drop the version references nothing uses any more, and check that no
    ELF of the bundle needs a newer glibc."""
    for name, calls in NEWER_CALLS.items():
        if not (lib / name).exists():
            continue
        renames = lib / f"{name}.renames"
        renames.write_text("".join(f"{old} {new}\n" for old, new in calls.items()))
        subprocess.run([patchelf, "--rename-dynamic-symbols", str(renames),
                        str(lib / name)], check=True)
        renames.unlink()
        for new in calls.values():  # unversioned: glibc's default getentropy, 2.25's
            subprocess.run([patchelf, "--clear-symbol-version", new, str(lib / name)],
                           check=True)
        elf.weaken_unused_versions(lib / name)
    for name, weak in WEAK_CALLS.items():
        if not (lib / name).exists():
            continue
        for symbol in sorted(weak):
            subprocess.run([patchelf, "--clear-symbol-version", symbol, str(lib / name)],
                           check=True)
        elf.weaken_symbols(lib / name, weak)
        elf.weaken_unused_versions(lib / name)
    too_new = [f"{path.name}: GLIBC_{'.'.join(map(str, v))}" for path in elves
               for v in elf.glibc_versions(path) if v > OLDEST_GLIBC]
    if too_new:
        sys.exit(f"build.py: needs a glibc newer than {OLDEST_GLIBC}: {too_new}")
