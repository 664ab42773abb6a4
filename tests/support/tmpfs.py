"""A small tmpfs of a test's own (a disk that fills up), unmounted and removed after."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def mounted(options: str, prefix: str = "initd-tmpfs-") -> Iterator[Path]:
    """A tmpfs mounted with ``options`` (``size=1m,mode=1777``) at a new directory."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)
        path.rmdir()
