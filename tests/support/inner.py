"""A pytest run inside a test: for the suite's own plugins, proved on cases that fail.

The cases are written to a directory of their own, with no ini file (``-c /dev/null``),
no cache and no plugin loaded unless named (``-p``), so the outer suite's options,
markers and plugins never leak in; initd's tree is on the path so the plugin under test
imports as the suite imports it. (The plugins installed for the suite, loaded in each
inner process and xdist worker, once cost three quarters of such a run's CPU.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def run_pytest(directory: Path, plugin: str, *more: str,
               env: Mapping[str, str] | None = None, timeout: float = 120
               ) -> subprocess.CompletedProcess[str]:
    """pytest on ``directory`` with ``plugin`` (a module of tests/support) and ``more``."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", f"tests.support.{plugin}",
                           "-p", "no:cacheprovider", *more, "--rootdir", str(directory),
                           "-c", os.devnull, str(directory)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT),
                               "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **(env or {})})
