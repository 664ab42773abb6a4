"""What a run of initd imports, as ``python -X importtime`` reports it: PID 1's and the
supervisor's modules (the supervisor inherits PID 1's stderr), each by its full name.
Started as the console script starts it (``-m`` would add runpy's own imports)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def imported(*args: str, cwd: str | Path) -> set[str]:
    """Every module ``initd ARGS`` imports; the run must succeed."""
    script = "import sys; from initd.cli import main; sys.exit(main())"
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", script, *args],
                         capture_output=True, text=True, timeout=60, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()
            if line.startswith("import time:")}
